/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 PAD / PADV2 (tvmk_s8_ops.h: tvmk_pad_s8_params): the
 * output in row-major order, each element the input's at (index - begin) when inside it,
 * else value. output must not overlap data.
 */
#include <stddef.h>

#include "tvmk_s8_ops.h"

int32_t tvmk_pad_s8(const int8_t *data, int8_t *output, const struct tvmk_pad_s8_params *params,
                    void *resource_handle)
{
    const struct tvmk_pad_s8_params *p = params;
    int32_t idx[TVMK_MAX_DIMS];
    int32_t in_strides[TVMK_MAX_DIMS];
    int32_t d, j, stride;

    (void)resource_handle;
    if (data == NULL || output == NULL || p == NULL || p->ndim < 1 ||
        p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->value < -128 || p->value > 127) {
        return TVM_DEVICE_ERR_INVALID;
    }
    stride = 1;
    for (d = p->ndim - 1; d >= 0; --d) {
        if (p->begin[d] < 0 || p->in_shape[d] < 0 ||
            p->begin[d] + p->in_shape[d] > p->out_shape[d]) {
            return TVM_DEVICE_ERR_INVALID;
        }
        in_strides[d] = stride;
        stride *= p->in_shape[d];
        idx[d] = 0;
    }
    for (j = 0; j < p->count; ++j) {
        ptrdiff_t src = 0;
        int inside = 1;
        for (d = 0; d < p->ndim; ++d) {
            const int32_t i = idx[d] - p->begin[d];
            if (i < 0 || i >= p->in_shape[d]) {
                inside = 0;
                break;
            }
            src += (ptrdiff_t)i * in_strides[d];
        }
        output[j] = inside ? data[src] : (int8_t)p->value;
        for (d = p->ndim - 1; d >= 0; --d) {
            if (++idx[d] < p->out_shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
