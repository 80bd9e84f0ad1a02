/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Clip (ONNX) with bounds computed at run time,
 * output = min(max(input, *min), *max); an absent bound (NULL) does not clip. When min
 * is larger than max every output is max, as ONNX defines; NaN passes through. The
 * output may alias the input (computed in place).
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_clip_bounds_f32(const float *input, const float *min, const float *max,
                             float *output, const struct tvmk_unary_params *params,
                             void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        float x = input[i];
        if (min != NULL && x < *min) {
            x = *min;
        }
        if (max != NULL && x > *max) {
            x = *max;
        }
        output[i] = x;
    }
    return TVM_DEVICE_OK;
}
