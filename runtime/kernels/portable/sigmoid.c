/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Sigmoid (ONNX), Y = 1 / (1 + exp(-X)).
 * Numerically stable: expf only ever sees a non-positive argument, so it cannot
 * overflow for large |x|. Y may alias X (computed in place).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_sigmoid_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                         void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const float x = X[i];
        if (x >= 0.0f) {
            Y[i] = 1.0f / (1.0f + expf(-x));
        } else {
            const float e = expf(x);
            Y[i] = e / (1.0f + e);
        }
    }
    return TVM_DEVICE_OK;
}
