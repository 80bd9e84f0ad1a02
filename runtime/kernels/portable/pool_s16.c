/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: AVERAGE_POOL_2D and MAX_POOL_2D (NHWC,
 * tvmk_pool2d_s8_params), TFLM's reference_integer_ops arithmetic for int16: padded
 * positions left out, the average rounded half away from zero, then the activation's
 * clamp. Y must not overlap X.
 */
#include <stddef.h>

#include "tvmk_s16.h"

static int valid(const struct tvmk_pool2d_s8_params *p)
{
    return p->N >= 0 && p->H >= 1 && p->W >= 1 && p->C >= 0 && p->KH >= 1 && p->KW >= 1 &&
           p->OH >= 0 && p->OW >= 0 && p->stride_h >= 1 && p->stride_w >= 1 &&
           p->pad_top >= 0 && p->pad_left >= 0 && p->act_min <= p->act_max &&
           p->act_min >= -32768 && p->act_max <= 32767;
}

/* The window of output index o along a dim of size n: [*begin, *end) in the input. */
static void window(int32_t o, int32_t stride, int32_t pad, int32_t k, int32_t n,
                   int32_t *begin, int32_t *end)
{
    const int32_t origin = o * stride - pad;
    *begin = origin < 0 ? 0 : origin;
    *end = origin + k < n ? origin + k : n;
}

/* One output element: the average (is_max 0) or maximum of channel c over the window. */
static int32_t reduce(const int16_t *X, const struct tvmk_pool2d_s8_params *p, int32_t n,
                      int32_t c, int32_t y0, int32_t y1, int32_t x0, int32_t x1, int is_max)
{
    const int32_t count = (y1 - y0) * (x1 - x0);
    int32_t acc = is_max ? -32768 : 0;
    int32_t y, x;

    for (y = y0; y < y1; ++y) {
        const int16_t *row = X + (((size_t)n * (size_t)p->H + (size_t)y) * (size_t)p->W) *
                                     (size_t)p->C + (size_t)c;
        for (x = x0; x < x1; ++x) {
            const int32_t v = row[(size_t)x * (size_t)p->C];
            acc = is_max ? (v > acc ? v : acc) : acc + v;
        }
    }
    if (!is_max) {
        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    }
    return acc < p->act_min ? p->act_min : (acc > p->act_max ? p->act_max : acc);
}

static int32_t pool(const int16_t *X, int16_t *Y, const struct tvmk_pool2d_s8_params *p,
                    int is_max)
{
    int32_t n, oy, ox, c, y0, y1, x0, x1;

    if (X == NULL || Y == NULL || p == NULL || !valid(p)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            window(oy, p->stride_h, p->pad_top, p->KH, p->H, &y0, &y1);
            for (ox = 0; ox < p->OW; ++ox) {
                int16_t *out = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW +
                                    (size_t)ox) * (size_t)p->C;
                window(ox, p->stride_w, p->pad_left, p->KW, p->W, &x0, &x1);
                if (!is_max && (y1 <= y0 || x1 <= x0)) {
                    return TVM_DEVICE_ERR_INVALID;
                }
                for (c = 0; c < p->C; ++c) {
                    out[c] = (int16_t)reduce(X, p, n, c, y0, y1, x0, x1, is_max);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_avgpool2d_s16(const int16_t *X, int16_t *Y,
                           const struct tvmk_pool2d_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return pool(X, Y, params, 0);
}

int32_t tvmk_maxpool2d_s16(const int16_t *X, int16_t *Y,
                           const struct tvmk_pool2d_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return pool(X, Y, params, 1);
}
