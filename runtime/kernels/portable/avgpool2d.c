/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: AveragePool (ONNX), 2-D, NCHW or NHWC, with stride, padding and
 * dilation. The sum runs over the window's taps inside the input. With count_include_pad
 * it is divided by the number of taps inside the padded input
 * [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right), else by the number inside the
 * input (an output with no such tap is 0). Y must not overlap X.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

/* floor(a / b) for b > 0 and any sign of a. */
static int32_t tvmk_avgpool_floor_div(int32_t a, int32_t b)
{
    int32_t q = a / b;
    if (a % b != 0 && a < 0) {
        --q;
    }
    return q;
}

/* The taps t in [0, k) whose position start + t * dil is in [lo, hi): *first .. *last
 * (empty when *last < *first). */
static void tvmk_avgpool_taps(int32_t start, int32_t dil, int32_t k, int32_t lo, int32_t hi,
                              int32_t *first, int32_t *last)
{
    const int32_t t0 = -tvmk_avgpool_floor_div(start - lo, dil);
    const int32_t t1 = tvmk_avgpool_floor_div(hi - 1 - start, dil);
    *first = t0 < 0 ? 0 : t0;
    *last = t1 > k - 1 ? k - 1 : t1;
}

int32_t tvmk_avgpool2d_f32(const float *X, float *Y, const struct tvmk_pool2d_params *params,
                           void *resource_handle)
{
    const struct tvmk_pool2d_params *p = params;
    int32_t nc, oh, ow, kh, kw;
    size_t xn, xc, xh, xw, yn, yc, yh, yw; /* element strides of X and Y */

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->N < 0 || p->C < 0 || p->H < 0 || p->W < 0 || p->KH <= 0 || p->KW <= 0 ||
        p->OH < 0 || p->OW < 0 || p->stride_h <= 0 || p->stride_w <= 0 || p->dil_h <= 0 ||
        p->dil_w <= 0 || (p->layout != TVMK_LAYOUT_NCHW && p->layout != TVMK_LAYOUT_NHWC) || p->pad_top < 0 || p->pad_left < 0 || p->pad_bottom < 0 ||
        p->pad_right < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->layout == TVMK_LAYOUT_NCHW) {
        xw = 1; xh = (size_t)p->W; xc = xh * (size_t)p->H;
        yw = 1; yh = (size_t)p->OW; yc = yh * (size_t)p->OH;
        xn = xc * (size_t)p->C; yn = yc * (size_t)p->C;
    } else {
        xc = 1; xw = (size_t)p->C; xh = xw * (size_t)p->W;
        yc = 1; yw = (size_t)p->C; yh = yw * (size_t)p->OW;
        xn = xh * (size_t)p->H; yn = yh * (size_t)p->OH;
    }
    for (nc = 0; nc < p->N * p->C; ++nc) {
        const size_t n = (size_t)(nc / p->C);
        const size_t c = (size_t)(nc % p->C);
        const float *x = X + n * xn + c * xc;
        float *y = Y + n * yn + c * yc;
        for (oh = 0; oh < p->OH; ++oh) {
            const int32_t h0 = oh * p->stride_h - p->pad_top;
            int32_t kh0, kh1, count_h;
            tvmk_avgpool_taps(h0, p->dil_h, p->KH, 0, p->H, &kh0, &kh1);
            if (p->count_include_pad) {
                int32_t a, b;
                tvmk_avgpool_taps(h0, p->dil_h, p->KH, -p->pad_top, p->H + p->pad_bottom, &a, &b);
                count_h = b - a + 1;
            } else {
                count_h = kh1 - kh0 + 1;
            }
            for (ow = 0; ow < p->OW; ++ow) {
                const int32_t w0 = ow * p->stride_w - p->pad_left;
                float sum = 0.0f;
                int32_t kw0, kw1, count_w;
                tvmk_avgpool_taps(w0, p->dil_w, p->KW, 0, p->W, &kw0, &kw1);
                if (p->count_include_pad) {
                    int32_t a, b;
                    tvmk_avgpool_taps(w0, p->dil_w, p->KW, -p->pad_left, p->W + p->pad_right,
                                      &a, &b);
                    count_w = b - a + 1;
                } else {
                    count_w = kw1 - kw0 + 1;
                }
                for (kh = kh0; kh <= kh1; ++kh) {
                    const float *xr = x + (size_t)(h0 + kh * p->dil_h) * xh;
                    for (kw = kw0; kw <= kw1; ++kw) {
                        sum += xr[(size_t)(w0 + kw * p->dil_w) * xw];
                    }
                }
                y[(size_t)oh * yh + (size_t)ow * yw] =
                    (count_h > 0 && count_w > 0) ? sum / (float)(count_h * count_w) : 0.0f;
            }
        }
    }
    return TVM_DEVICE_OK;
}
