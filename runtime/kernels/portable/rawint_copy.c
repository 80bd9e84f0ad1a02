/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the copies of raw integers: CONCATENATION (int32) and RESHAPE
 * (a copy, skipped in place; memmove for overlap). STRIDED_SLICE on raw integers is
 * strided_slice.c's byte walk.
 */
#include <string.h>

#include "rawint.h"

int32_t tvmk_concat_i32(const int32_t *const *inputs, int32_t *concat_result,
                        const struct tvmk_concat_params *params, void *resource_handle)
{
    const struct tvmk_concat_params *p = params;
    int32_t *y = concat_result;
    int32_t i, o;

    (void)resource_handle;
    if (inputs == NULL || y == NULL || p == NULL || p->ninputs < 1
        || p->ninputs > TVMK_CONCAT_MAX_INPUTS || p->outer < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->ninputs; ++i) {
        if (inputs[i] == NULL || p->blocks[i] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->ninputs; ++i) {
            memcpy(y, inputs[i] + (size_t)o * (size_t)p->blocks[i],
                   (size_t)p->blocks[i] * sizeof(int32_t));
            y += p->blocks[i];
        }
    }
    return TVM_DEVICE_OK;
}

static int32_t tvmk_copy(const void *data, void *out, int32_t count, size_t size)
{
    if (data == NULL || out == NULL || count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (out != data && count > 0) {
        memmove(out, data, (size_t)count * size);
    }
    return TVM_DEVICE_OK;
}

#define TVMK_RESHAPE(name, type)                                                        \
    int32_t name(const type *data, type *reshaped, const struct tvmk_unary_params *params, \
                 void *resource_handle)                                                 \
    {                                                                                   \
        (void)resource_handle;                                                          \
        if (params == NULL) {                                                           \
            return TVM_DEVICE_ERR_INVALID;                                              \
        }                                                                               \
        return tvmk_copy(data, reshaped, params->count, sizeof(type));                  \
    }

TVMK_RESHAPE(tvmk_reshape_i32, int32_t)
TVMK_RESHAPE(tvmk_reshape_u32, uint32_t)
