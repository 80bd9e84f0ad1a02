/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: FULLY_CONNECTED (TFLite), float32: the input read as batch rows
 * of in_size values, each multiplied with every row of weights (out_size x in_size), plus
 * the optional bias, then the fused activation. output must not overlap input.
 */
#include <stddef.h>

#include "activation.h"

int32_t tvmk_fully_connected_f32(const float *input, const float *weights, const float *bias,
                                 float *output, const struct tvmk_fully_connected_params *params,
                                 void *resource_handle)
{
    const struct tvmk_fully_connected_params *p = params;
    int32_t b, o, i;

    (void)resource_handle;
    if (input == NULL || weights == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->batch < 0 || p->in_size < 0 || p->out_size < 0 || !tvmk_act_valid(p->activation)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->batch; ++b) {
        const float *x = input + (size_t)b * (size_t)p->in_size;
        float *y = output + (size_t)b * (size_t)p->out_size;
        for (o = 0; o < p->out_size; ++o) {
            const float *w = weights + (size_t)o * (size_t)p->in_size;
            float acc = bias == NULL ? 0.0f : bias[o];
            for (i = 0; i < p->in_size; ++i) {
                acc += x[i] * w[i];
            }
            y[o] = tvmk_activate(p->activation, acc);
        }
    }
    return TVM_DEVICE_OK;
}
