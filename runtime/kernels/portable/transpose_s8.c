/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 TRANSPOSE (tvmk_transpose_params, tvmk_portable.h), a copy
 * of the bytes as TFLM's transpose makes it (the output keeps the input's values whatever
 * the two tensors' quantization says). The output is written in order while an odometer
 * over its dims walks the input with in_strides. Not in place: transposed must not
 * overlap data.
 */
#include <stddef.h>

#include "tvmk_s8_ops.h"

int32_t tvmk_transpose_s8(const int8_t *data, int8_t *transposed,
                          const struct tvmk_transpose_params *params, void *resource_handle)
{
    int32_t idx[TVMK_MAX_DIMS];
    int32_t ndim, inner, outer, o, d, j;
    ptrdiff_t s, off = 0;

    (void)resource_handle;
    if (data == NULL || transposed == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    ndim = params->ndim;
    if (ndim < 1 || ndim > TVMK_MAX_DIMS || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    inner = params->shape[ndim - 1];
    if (params->count == 0 || inner <= 0) {
        return TVM_DEVICE_OK;
    }
    s = params->in_strides[ndim - 1];
    outer = params->count / inner;
    for (d = 0; d < ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        const int8_t *x = data + off;
        int8_t *y = transposed + (size_t)o * (size_t)inner;
        for (j = 0; j < inner; ++j) {
            y[j] = x[(ptrdiff_t)j * s];
        }
        for (d = ndim - 2; d >= 0; --d) {
            off += params->in_strides[d];
            if (++idx[d] < params->shape[d]) {
                break;
            }
            off -= (ptrdiff_t)params->in_strides[d] * params->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
