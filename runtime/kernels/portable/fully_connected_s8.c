/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: FULLY_CONNECTED as TFLM's
 * reference_integer_ops::FullyConnected (FullyConnectedPerChannel with per-channel
 * weights): int32 accumulation of
 * (w + weights_offset) * (x + input_offset), plus the bias, requantized
 * (MultiplyByQuantizedMultiplier), plus output_offset, clamped to the activation's
 * range. output must not overlap input.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

int32_t tvmk_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                const int32_t *bias, int8_t *output,
                                const struct tvmk_fully_connected_s8_params *params,
                                void *resource_handle)
{
    const struct tvmk_fully_connected_s8_params *p = params;
    int32_t b, o, i;

    (void)resource_handle;
    if (input == NULL || weights == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->batch < 0 || p->in_size < 0 || p->out_size < 0 || p->output_shift > 30 ||
        p->output_shift < -31 || p->activation_min > p->activation_max) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->batch; ++b) {
        const int8_t *x = input + (size_t)b * (size_t)p->in_size;
        int8_t *y = output + (size_t)b * (size_t)p->out_size;
        for (o = 0; o < p->out_size; ++o) {
            const int8_t *w = weights + (size_t)o * (size_t)p->in_size;
            int32_t acc = 0;
            for (i = 0; i < p->in_size; ++i) {
                acc += ((int32_t)w[i] + p->weights_offset) * ((int32_t)x[i] + p->input_offset);
            }
            if (bias != NULL) {
                acc += bias[o];
            }
            if (p->channel_multiplier != NULL && p->channel_shift != NULL) {
                acc = tvmk_multiply_by_quantized_multiplier(acc, p->channel_multiplier[o],
                                                            (int)p->channel_shift[o]);
            } else {
                acc = tvmk_multiply_by_quantized_multiplier(acc, p->output_multiplier,
                                                            (int)p->output_shift);
            }
            acc += p->output_offset;
            acc = acc < p->activation_min ? p->activation_min : acc;
            acc = acc > p->activation_max ? p->activation_max : acc;
            y[o] = (int8_t)acc;
        }
    }
    return TVM_DEVICE_OK;
}
