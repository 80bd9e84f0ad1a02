/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: CONV_2D int8 through arm_convolve_wrapper_s8, which picks CMSIS-NN's 1x1, 1xN
 * or general kernel as TFLM's kernels/cmsis_nn/conv.cc lets it.
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                                const struct tvmk_conv2d_s8_params *p, void *resource_handle)
{
    cmsis_nn_context ctx;
    const cmsis_nn_conv_params conv = tvmk_cmsis_nn_conv(p, p->input_offset, p->output_offset);
    const cmsis_nn_per_channel_quant_params quant =
        tvmk_cmsis_nn_per_channel(p->output_multiplier, p->output_shift);
    const cmsis_nn_dims input = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    const cmsis_nn_dims filter = tvmk_cmsis_nn_dims(p->M, p->KH, p->KW, p->C / p->group);
    const cmsis_nn_dims bias = tvmk_cmsis_nn_dims(1, 1, 1, p->M);
    const cmsis_nn_dims output = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, p->M);
    (void)resource_handle;

    ctx.buf = p->scratch;
    ctx.size = p->scratch_bytes;
    if (arm_convolve_wrapper_s8_get_buffer_size(&conv, &input, &filter, &output) > ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    }
    return tvmk_cmsis_nn_status(arm_convolve_wrapper_s8(&ctx, &conv, &quant, &input, X,
                                                        &filter, W, &bias, B, &output, Y));
}
