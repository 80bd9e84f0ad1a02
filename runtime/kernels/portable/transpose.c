/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Transpose (ONNX). The output is written in order while an
 * odometer over its dims walks the input with in_strides; the innermost output dim is a
 * strided loop. Not in place: transposed must not overlap data.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_transpose_f32(const float *data, float *transposed,
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
    if (ndim < 0 || ndim > TVMK_MAX_DIMS || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->count == 0) {
        return TVM_DEVICE_OK;
    }
    if (ndim == 0) {
        transposed[0] = data[0];
        return TVM_DEVICE_OK;
    }
    inner = params->shape[ndim - 1];
    if (inner <= 0) {
        return TVM_DEVICE_OK;
    }
    s = params->in_strides[ndim - 1];
    outer = params->count / inner;
    for (d = 0; d < ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        const float *x = data + off;
        float *y = transposed + (size_t)o * (size_t)inner;
        if (s == 1) {
            for (j = 0; j < inner; ++j) {
                y[j] = x[j];
            }
        } else {
            for (j = 0; j < inner; ++j) {
                y[j] = x[(ptrdiff_t)j * s];
            }
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
