/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Clip (ONNX, constant bounds) and RELU6 (TFLite),
 * Y = min(max(X, min), max); NaN passes through. Y may alias X (computed in place).
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_clip_f32(const float *input, float *output, const struct tvmk_clip_params *params,
                      void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0 ||
        !(params->min <= params->max)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const float x = input[i];
        output[i] = x < params->min ? params->min : (x > params->max ? params->max : x);
    }
    return TVM_DEVICE_OK;
}
