/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the shared walk of the transpose and strided-slice kernels
 * (transpose.c, transpose_s8.c, quantize_s16.c, strided_slice.c). Private to this folder. The output is written in order while an
 * odometer over its dims walks the input with in_strides; the innermost output dim is
 * one copy when its input stride is 1, else a strided loop. Not in place.
 */
#ifndef TVMK_PORTABLE_TRANSPOSE_H_
#define TVMK_PORTABLE_TRANSPOSE_H_

#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"

/* Copy count elements of elem bytes each from data, output dim d of ndim having shape[d]
 * entries that step in_strides[d] elements through data (negative: backwards); the
 * caller checked 1 <= ndim <= TVMK_MAX_DIMS and a positive count and innermost dim, and
 * gives the odometer's TVMK_MAX_DIMS indices (idx). */
static inline void tvmk_strided_walk(const unsigned char *data, unsigned char *out, size_t elem,
                                     int32_t ndim, int32_t count, const int32_t *shape,
                                     const int32_t *in_strides, int32_t *idx)
{
    int32_t inner = shape[ndim - 1], outer = count / inner, o, d, j;
    ptrdiff_t s = in_strides[ndim - 1], off = 0;

    for (d = 0; d < ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        const unsigned char *x = data + off * (ptrdiff_t)elem;
        unsigned char *y = out + (size_t)o * (size_t)inner * elem;
        if (s == 1) {
            memcpy(y, x, (size_t)inner * elem);
        } else {
            for (j = 0; j < inner; ++j) {
                memcpy(y + (size_t)j * elem, x + (ptrdiff_t)j * s * (ptrdiff_t)elem, elem);
            }
        }
        for (d = ndim - 2; d >= 0; --d) {
            off += in_strides[d];
            if (++idx[d] < shape[d]) {
                break;
            }
            off -= (ptrdiff_t)in_strides[d] * shape[d];
            idx[d] = 0;
        }
    }
}

/* The transpose's walk: tvmk_strided_walk with the params' dims. */
static inline void tvmk_transpose_walk(const unsigned char *data, unsigned char *transposed,
                                       size_t elem,
                                       const struct tvmk_transpose_params *params,
                                       int32_t *idx)
{
    tvmk_strided_walk(data, transposed, elem, params->ndim, params->count, params->shape,
                      params->in_strides, idx);
}

/* The int8 and int16 TRANSPOSE (tvmk_transpose_params; elements of elem bytes): the
 * params checked, then the walk. */
static inline int32_t tvmk_transpose_int(const unsigned char *data, unsigned char *transposed,
                                         size_t elem,
                                         const struct tvmk_transpose_params *params)
{
    int32_t idx[TVMK_MAX_DIMS];

    if (data == NULL || transposed == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->ndim < 1 || params->ndim > TVMK_MAX_DIMS || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->count == 0 || params->shape[params->ndim - 1] <= 0) {
        return TVM_DEVICE_OK;
    }
    tvmk_transpose_walk(data, transposed, elem, params, idx);
    return TVM_DEVICE_OK;
}

#endif /* TVMK_PORTABLE_TRANSPOSE_H_ */
