/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 CONCATENATION (tvmk_s8_ops.h: tvmk_concat_s8_params), a
 * copy: every input is quantized as the output (TFLM requires it). For each outer index,
 * each input's block follows the previous one's. concat_result must not overlap an input.
 */
#include <stddef.h>

#include "tvmk_s8_ops.h"

int32_t tvmk_concat_s8(const int8_t *const *inputs, int8_t *concat_result,
                       const struct tvmk_concat_s8_params *params, void *resource_handle)
{
    const struct tvmk_concat_s8_params *p = params;
    int8_t *y = concat_result;
    int32_t i, o, j;

    (void)resource_handle;
    if (inputs == NULL || concat_result == NULL || p == NULL || p->ninputs < 1 ||
        p->ninputs > TVMK_CONCAT_MAX_INPUTS || p->outer < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->ninputs; ++i) {
        if (inputs[i] == NULL || p->blocks[i] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->ninputs; ++i) {
            const int8_t *x = inputs[i] + (size_t)o * (size_t)p->blocks[i];
            for (j = 0; j < p->blocks[i]; ++j) {
                *y++ = x[j];
            }
        }
    }
    return TVM_DEVICE_OK;
}
