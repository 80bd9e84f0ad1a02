/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: DEPTHWISE_CONV_2D int8 through arm_depthwise_conv_wrapper_s8 (its 3x3, fast
 * or general kernel, as TFLM's kernels/cmsis_nn/depthwise_conv.cc).
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                          const int32_t *bias, int8_t *output,
                                          const struct tvmk_depthwise_conv2d_s8_params *p,
                                          void *resource_handle)
{
    cmsis_nn_context ctx;
    const cmsis_nn_dw_conv_params dw = tvmk_cmsis_nn_dw_conv(p, p->input_offset,
                                                             p->output_offset);
    const cmsis_nn_per_channel_quant_params quant =
        tvmk_cmsis_nn_per_channel(p->output_multiplier, p->output_shift);
    const int32_t depth = p->C * p->mult;
    const cmsis_nn_dims in = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    const cmsis_nn_dims f = tvmk_cmsis_nn_dims(1, p->KH, p->KW, depth);
    const cmsis_nn_dims b = tvmk_cmsis_nn_dims(1, 1, 1, depth);
    const cmsis_nn_dims out = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, depth);
    (void)resource_handle;

    ctx.buf = p->scratch;
    ctx.size = p->scratch_bytes;
    if (arm_depthwise_conv_wrapper_s8_get_buffer_size(&dw, &in, &f, &out) > ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    }
    return tvmk_cmsis_nn_status(arm_depthwise_conv_wrapper_s8(&ctx, &dw, &quant, &in, input,
                                                              &f, filter, &b, bias, &out,
                                                              output));
}
