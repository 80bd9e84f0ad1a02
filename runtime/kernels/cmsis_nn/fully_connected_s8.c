/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: FULLY_CONNECTED int8 through arm_fully_connected_wrapper_s8 (weights per tensor
 * or per output channel), as TFLM's kernels/cmsis_nn/fully_connected.cc calls it for a 2-D
 * output. Where CMSIS-NN asks for a buffer (Helium), it holds the weights' row sums: for
 * constant weights, computed at generation time (params->kernel_sums, in flash: TFLM keeps
 * them in its arena), else by arm_vector_sum_s8 into the scratch at each call.
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                         const int32_t *bias, int8_t *output,
                                         const struct tvmk_fully_connected_s8_params *p,
                                         void *resource_handle)
{
    cmsis_nn_context ctx;
    cmsis_nn_fc_params fc;
    cmsis_nn_quant_params quant;
    int32_t multiplier = p->output_multiplier;
    int32_t shift = p->output_shift;
    const cmsis_nn_dims in = tvmk_cmsis_nn_dims(p->batch, 1, 1, p->in_size);
    const cmsis_nn_dims f = tvmk_cmsis_nn_dims(p->in_size, 1, 1, p->out_size);
    const cmsis_nn_dims b = tvmk_cmsis_nn_dims(1, 1, 1, p->out_size);
    const cmsis_nn_dims out = tvmk_cmsis_nn_dims(p->batch, 1, 1, p->out_size);
    (void)resource_handle;

    ctx.buf = p->scratch;
    ctx.size = p->scratch_bytes;
    fc.input_offset = p->input_offset;
    fc.filter_offset = p->weights_offset;
    fc.output_offset = p->output_offset;
    fc.activation.min = p->activation_min;
    fc.activation.max = p->activation_max;
    if (p->channel_multiplier != NULL) {
        quant.is_per_channel = 1;
        quant.multiplier = (int32_t *)(uintptr_t)p->channel_multiplier;
        quant.shift = (int32_t *)(uintptr_t)p->channel_shift;
    } else {
        quant.is_per_channel = 0;
        quant.multiplier = &multiplier;
        quant.shift = &shift;
    }
    if (p->kernel_sums != NULL) {
        /* CMSIS-NN only reads the sums; its context is not const-qualified. */
        ctx.buf = (void *)(uintptr_t)p->kernel_sums;
        ctx.size = p->out_size * (int32_t)sizeof(int32_t);
    } else if (arm_fully_connected_s8_get_buffer_size(&f) > ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    } else if (ctx.buf != NULL) {
        (void)arm_vector_sum_s8((int32_t *)ctx.buf, p->in_size, p->out_size, weights,
                                fc.input_offset, fc.filter_offset, bias);
    }
    return tvmk_cmsis_nn_status(arm_fully_connected_wrapper_s8(&ctx, &fc, &quant, &in, input,
                                                               &f, weights, &b, bias, &out,
                                                               output));
}
