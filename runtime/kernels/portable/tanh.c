/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Tanh (ONNX), elementwise tanhf.
 * output may alias input (computed in place).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_tanh_f32(const float *input, float *output,
                      const struct tvmk_unary_params *params, void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        output[i] = tanhf(input[i]);
    }
    return TVM_DEVICE_OK;
}
