/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: HardSwish (ONNX; TFLite's HARD_SWISH), Y = X * min(max(X + 3,
 * 0), 6) / 6 in float, as TFLM's reference kernel computes it. Y may alias X (computed in
 * place).
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_hard_swish_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                            void *resource_handle)
{
    int32_t i, count;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    for (i = 0; i < count; ++i) {
        const float x = X[i];
        float r = x + 3.0f;
        r = r < 0.0f ? 0.0f : r;
        r = r > 6.0f ? 6.0f : r;
        Y[i] = x * r / 6.0f;
    }
    return TVM_DEVICE_OK;
}
