/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the body the int8 and int16 MEAN kernels share (mean_s8.c,
 * simple_s16.c): TFLM's QuantizedMeanOrSum over some dims (tvmk_mean_s8_params). No
 * scratch: each output sums its reduced group directly (an odometer over the kept dims
 * outside, over the reduced dims inside); the int32 sum wraps as TFLM's, the same in any
 * order. Private to this folder; the macro defines one kernel.
 */
#ifndef TVMK_PORTABLE_MEAN_INT_H_
#define TVMK_PORTABLE_MEAN_INT_H_

#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8_ops.h"

/* Advance idx over the dims d with (out_strides[d] == 0) == reduced; 0 when it wraps. */
static inline int tvmk_mean_next(const struct tvmk_mean_s8_params *p, int32_t *idx, int reduced)
{
    int32_t d;

    for (d = p->ndim - 1; d >= 0; --d) {
        if ((p->out_strides[d] == 0) != reduced || p->shape[d] == 1) {
            continue;
        }
        if (++idx[d] < p->shape[d]) {
            return 1;
        }
        idx[d] = 0;
    }
    return 0;
}

/* MEAN of T (range [lo, hi]). */
#define TVMK_MEAN_INT(name, T, lo, hi)                                                       \
int32_t name(const T *data, T *reduced, const struct tvmk_mean_s8_params *params,            \
             void *resource_handle)                                                          \
{                                                                                            \
    const struct tvmk_mean_s8_params *p = params;                                            \
    int32_t in_strides[TVMK_MAX_DIMS];                                                       \
    int32_t idx[TVMK_MAX_DIMS];                                                              \
    int32_t d, stride;                                                                       \
                                                                                             \
    (void)resource_handle;                                                                   \
    if (data == NULL || reduced == NULL || p == NULL || p->ndim < 1 ||                       \
        p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->out_count < 0 || p->reduced < 1) {     \
        return TVM_DEVICE_ERR_INVALID;                                                       \
    }                                                                                        \
    stride = 1;                                                                              \
    for (d = p->ndim - 1; d >= 0; --d) {                                                     \
        if (p->shape[d] < 1) {                                                               \
            return p->shape[d] == 0 ? TVM_DEVICE_OK : TVM_DEVICE_ERR_INVALID;                \
        }                                                                                    \
        in_strides[d] = stride;                                                              \
        stride *= p->shape[d];                                                               \
        idx[d] = 0;                                                                          \
    }                                                                                        \
    do {                                                                                     \
        ptrdiff_t base = 0;                                                                  \
        ptrdiff_t out = 0;                                                                   \
        int32_t sum = 0;                                                                     \
        int32_t v;                                                                           \
        for (d = 0; d < p->ndim; ++d) {                                                      \
            base += (ptrdiff_t)idx[d] * in_strides[d];                                       \
            out += (ptrdiff_t)idx[d] * p->out_strides[d];                                    \
        }                                                                                    \
        do {                                                                                 \
            ptrdiff_t off = 0;                                                               \
            for (d = 0; d < p->ndim; ++d) {                                                  \
                if (p->out_strides[d] == 0) {                                                \
                    off += (ptrdiff_t)idx[d] * in_strides[d];                                \
                }                                                                            \
            }                                                                                \
            sum = (int32_t)((uint32_t)sum + (uint32_t)(int32_t)data[base + off]);            \
        } while (tvmk_mean_next(p, idx, 1));                                                 \
        sum = (int32_t)((uint32_t)sum - (uint32_t)p->input_zero_point * (uint32_t)p->reduced);\
        v = tvmk_multiply_by_quantized_multiplier(sum, p->multiplier, p->shift) +            \
            p->output_zero_point;                                                            \
        reduced[out] = (T)(v > (hi) ? (hi) : (v < (lo) ? (lo) : v));                         \
    } while (tvmk_mean_next(p, idx, 0));                                                     \
    return TVM_DEVICE_OK;                                                                    \
}

#endif /* TVMK_PORTABLE_MEAN_INT_H_ */
