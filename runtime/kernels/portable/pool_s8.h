/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: what the int8 pooling kernels (avgpool2d_s8.c,
 * maxpool2d_s8.c) share: checking the params and clipping a window to the input.
 * Private to this folder.
 */
#ifndef TVMK_PORTABLE_POOL_S8_H_
#define TVMK_PORTABLE_POOL_S8_H_

#include <stddef.h>

#include "tvmk_s8_ops.h"

/* 1 when the params describe pooling the kernels can compute. */
static inline int tvmk_pool_s8_valid(const struct tvmk_pool2d_s8_params *p)
{
    return p->N >= 0 && p->H >= 1 && p->W >= 1 && p->C >= 0 && p->KH >= 1 && p->KW >= 1 &&
           p->OH >= 0 && p->OW >= 0 && p->stride_h >= 1 && p->stride_w >= 1 &&
           p->pad_top >= 0 && p->pad_left >= 0 && p->act_min <= p->act_max &&
           p->act_min >= -128 && p->act_max <= 127;
}

/* The window of output index o along a dim of size n: [*begin, *end) in the input. */
static inline void tvmk_pool_s8_window(int32_t o, int32_t stride, int32_t pad, int32_t k,
                                       int32_t n, int32_t *begin, int32_t *end)
{
    const int32_t origin = o * stride - pad;
    *begin = origin < 0 ? 0 : origin;
    *end = origin + k < n ? origin + k : n;
}

static inline int8_t tvmk_pool_s8_clamp(int32_t v, const struct tvmk_pool2d_s8_params *p)
{
    return (int8_t)(v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v));
}

#endif /* TVMK_PORTABLE_POOL_S8_H_ */
