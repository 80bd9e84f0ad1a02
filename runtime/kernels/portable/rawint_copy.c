/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the copies of raw integers: CONCATENATION (int32), RESHAPE
 * (a copy, skipped in place; memmove for overlap) and a constant STRIDED_SLICE (int32,
 * a strided walk over the output).
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

int32_t tvmk_int_slice_i32(const int32_t *input, int32_t *output,
                           const struct tvmk_int_slice_params *params, void *resource_handle)
{
    const struct tvmk_int_slice_params *p = params;
    int32_t idx[TVMK_MAX_DIMS];
    int32_t n, d;
    ptrdiff_t off;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->ndim < 1
        || p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->offset < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    off = p->offset;
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (n = 0; n < p->count; ++n) {
        output[n] = input[off];
        for (d = p->ndim - 1; d >= 0; --d) {
            off += p->strides[d];
            if (++idx[d] < p->shape[d]) {
                break;
            }
            off -= (ptrdiff_t)p->strides[d] * p->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
