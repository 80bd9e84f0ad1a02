/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Concat (ONNX) and CONCATENATION (TFLite), any number of inputs
 * (an array of pointers). For each outer index, each input's block is copied after the
 * previous one's. concat_result must not overlap an input.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_concat_f32(const float *const *inputs, float *concat_result,
                        const struct tvmk_concat_params *params, void *resource_handle)
{
    const struct tvmk_concat_params *p = params;
    float *y = concat_result;
    int32_t i, o, j;

    (void)resource_handle;
    if (inputs == NULL || concat_result == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ninputs < 1 || p->ninputs > TVMK_CONCAT_MAX_INPUTS || p->outer < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->ninputs; ++i) {
        if (inputs[i] == NULL || p->blocks[i] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->ninputs; ++i) {
            const float *x = inputs[i] + (size_t)o * (size_t)p->blocks[i];
            for (j = 0; j < p->blocks[i]; ++j) {
                *y++ = x[j];
            }
        }
    }
    return TVM_DEVICE_OK;
}
