/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: LeakyRelu (ONNX; TFLite's LEAKY_RELU), Y = X where X > 0, else
 * alpha * X (alpha may be negative or above 1). Y may alias X (computed in place).
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_leaky_relu_f32(const float *X, float *Y, const struct tvmk_leaky_relu_params *params,
                            void *resource_handle)
{
    int32_t i, count;
    float alpha;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    alpha = params->alpha;
    for (i = 0; i < count; ++i) {
        const float x = X[i];
        Y[i] = x > 0.0f ? x : x * alpha;
    }
    return TVM_DEVICE_OK;
}
