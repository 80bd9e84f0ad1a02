/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Pad (ONNX, constant mode) and PAD / PADV2 (TFLite). The output
 * is written in order: along its innermost dim, value before the input's row, the row,
 * value after; an odometer walks the outer dims. output must not overlap data.
 */
#include <stddef.h>

#include "tvmk_portable.h"

/* 1 when the output index idx (outer dims, all but the last) lies inside the input. */
static int tvmk_pad_row_inside(const struct tvmk_pad_params *p, const int32_t *idx)
{
    int32_t d;

    for (d = 0; d < p->ndim - 1; ++d) {
        if (idx[d] < p->begin[d] || idx[d] >= p->begin[d] + p->in_shape[d]) {
            return 0;
        }
    }
    return 1;
}

int32_t tvmk_pad_f32(const float *data, float *output, const struct tvmk_pad_params *params,
                     void *resource_handle)
{
    const struct tvmk_pad_params *p = params;
    int32_t idx[TVMK_MAX_DIMS];
    int32_t d, o, j, inner, rows, last;
    const float *row = data;

    (void)resource_handle;
    if (data == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ndim < 1 || p->ndim > TVMK_MAX_DIMS || p->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    last = p->ndim - 1;
    inner = p->out_shape[last];
    if (p->count == 0 || inner <= 0) {
        return TVM_DEVICE_OK;
    }
    rows = p->count / inner;
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < rows; ++o) {
        float *y = output + (size_t)o * (size_t)inner;
        if (tvmk_pad_row_inside(p, idx)) {
            for (j = 0; j < inner; ++j) {
                const int32_t i = j - p->begin[last];
                y[j] = (i >= 0 && i < p->in_shape[last]) ? row[i] : p->value;
            }
            row += p->in_shape[last];
        } else {
            for (j = 0; j < inner; ++j) {
                y[j] = p->value;
            }
        }
        for (d = last - 1; d >= 0; --d) {
            if (++idx[d] < p->out_shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
