/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Relu (ONNX), Y = max(X, 0); NaN passes through.
 * Y may alias X (computed in place).
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_relu_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                      void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const float x = X[i];
        Y[i] = x < 0.0f ? 0.0f : x;
    }
    return TVM_DEVICE_OK;
}
