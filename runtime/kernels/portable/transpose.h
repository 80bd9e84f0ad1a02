/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the shared walk of the transpose kernels (transpose.c,
 * transpose_s8.c). Private to this folder. The output is written in order while an
 * odometer over its dims walks the input with in_strides; the innermost output dim is
 * one copy when its input stride is 1, else a strided loop. Not in place.
 */
#ifndef TVMK_PORTABLE_TRANSPOSE_H_
#define TVMK_PORTABLE_TRANSPOSE_H_

#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"

/* Copy params->count elements of elem bytes each; the caller checked params, with
 * 1 <= ndim <= TVMK_MAX_DIMS and a positive count and innermost dim, and gives the
 * odometer's TVMK_MAX_DIMS indices (idx). */
static inline void tvmk_transpose_walk(const unsigned char *data, unsigned char *transposed,
                                       size_t elem,
                                       const struct tvmk_transpose_params *params,
                                       int32_t *idx)
{
    int32_t ndim = params->ndim, inner = params->shape[params->ndim - 1];
    int32_t outer = params->count / inner, o, d, j;
    ptrdiff_t s = params->in_strides[ndim - 1], off = 0;

    for (d = 0; d < ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        const unsigned char *x = data + off * (ptrdiff_t)elem;
        unsigned char *y = transposed + (size_t)o * (size_t)inner * elem;
        if (s == 1) {
            memcpy(y, x, (size_t)inner * elem);
        } else {
            for (j = 0; j < inner; ++j) {
                memcpy(y + (size_t)j * elem, x + (ptrdiff_t)j * s * (ptrdiff_t)elem, elem);
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
}

#endif /* TVMK_PORTABLE_TRANSPOSE_H_ */
