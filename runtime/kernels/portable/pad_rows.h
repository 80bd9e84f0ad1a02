/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: constant padding by rows, what the float32, int8 and int16 PAD
 * kernels share (pad.c, pad_s8.c, simple_s16.c). Private to this folder.
 *
 * The trailing dims that are not padded are one contiguous run of the input (a pixel's
 * channels when only H and W are padded). Along the innermost padded dim, each output row
 * is then a fill before, one copy of the input's row (memcpy), a fill after; a row outside
 * the input along an outer dim is all fill. A fill of one-byte elements is a memset;
 * wider ones write the element once and double the written prefix with memcpy. The
 * result is the element-by-element definition's, byte for byte.
 */
#ifndef TVMK_PORTABLE_PAD_ROWS_H_
#define TVMK_PORTABLE_PAD_ROWS_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tvmk_portable.h"

/* n bytes at dst, each element of size bytes equal to the one at value. */
static inline void tvmk_pad_rows_fill(uint8_t *dst, size_t n, const void *value, size_t size)
{
    size_t done;

    if (n == 0) {
        return;
    }
    if (size == 1) {
        memset(dst, *(const uint8_t *)value, n);
        return;
    }
    memcpy(dst, value, size);
    for (done = size; done < n; done *= 2) {
        memcpy(dst + done, dst, done < n - done ? done : n - done);
    }
}

/* 1 when the shapes and begins describe a padding the kernels compute: ndim dims, each
 * input dim inside its output dim at begin. */
static inline int tvmk_pad_rows_valid(int32_t ndim, const int32_t *out_shape,
                                      const int32_t *in_shape, const int32_t *begin)
{
    int32_t d;

    if (ndim < 1 || ndim > TVMK_MAX_DIMS) {
        return 0;
    }
    for (d = 0; d < ndim; ++d) {
        if (begin[d] < 0 || in_shape[d] < 0 || begin[d] + in_shape[d] > out_shape[d]) {
            return 0;
        }
    }
    return 1;
}

/* output (out_shape, row-major) = data (in_shape) at begin, value (one element of size
 * bytes) elsewhere. Checked by tvmk_pad_rows_valid; output must not overlap data. */
static inline void tvmk_pad_rows(const void *data, void *output, size_t size, int32_t ndim,
                                 const int32_t *out_shape, const int32_t *in_shape,
                                 const int32_t *begin, const void *value)
{
    int32_t idx[TVMK_MAX_DIMS];
    const uint8_t *src = (const uint8_t *)data;
    uint8_t *dst = (uint8_t *)output;
    size_t run = size, before, copy, row;
    int32_t d, k = ndim - 1, rows = 1;

    /* The innermost padded dim k; the dims after it are one run of run bytes. */
    while (k >= 0 && in_shape[k] == out_shape[k]) {
        run *= (size_t)in_shape[k];
        --k;
    }
    if (k < 0) {
        memcpy(dst, src, run);
        return;
    }
    before = (size_t)begin[k] * run;
    copy = (size_t)in_shape[k] * run;
    row = (size_t)out_shape[k] * run;
    for (d = 0; d < k; ++d) {
        idx[d] = 0;
        rows *= out_shape[d];
    }
    for (; rows > 0; --rows, dst += row) {
        int inside = 1;
        for (d = 0; d < k; ++d) {
            inside &= idx[d] >= begin[d] && idx[d] < begin[d] + in_shape[d];
        }
        if (inside) {
            tvmk_pad_rows_fill(dst, before, value, size);
            memcpy(dst + before, src, copy);
            tvmk_pad_rows_fill(dst + before + copy, row - before - copy, value, size);
            src += copy;
        } else {
            tvmk_pad_rows_fill(dst, row, value, size);
        }
        for (d = k - 1; d >= 0; --d) {
            if (++idx[d] < out_shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

#endif /* TVMK_PORTABLE_PAD_ROWS_H_ */
