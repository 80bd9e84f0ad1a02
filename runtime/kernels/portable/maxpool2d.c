/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: MaxPool (ONNX), 2-D, NCHW or NHWC, with stride, padding and dilation.
 * Padded positions are ignored: each output is the maximum over the window's taps that
 * fall inside the input, NaNs skipped; -FLT_MAX (the lowest float) if none does or all are
 * NaN, as TFLite's and ONNX Runtime's kernels start their maximum there. Y must not overlap X.
 */
#include <float.h>
#include <stddef.h>

#include "tvmk_portable.h"

/* floor(a / b) for b > 0 and any sign of a. */
static int32_t tvmk_maxpool_floor_div(int32_t a, int32_t b)
{
    int32_t q = a / b;
    if (a % b != 0 && a < 0) {
        --q;
    }
    return q;
}

/* The taps t in [0, k) whose position start + t * dil is in [lo, hi): *first .. *last
 * (empty when *last < *first). */
static void tvmk_maxpool_taps(int32_t start, int32_t dil, int32_t k, int32_t lo, int32_t hi,
                              int32_t *first, int32_t *last)
{
    const int32_t t0 = -tvmk_maxpool_floor_div(start - lo, dil);
    const int32_t t1 = tvmk_maxpool_floor_div(hi - 1 - start, dil);
    *first = t0 < 0 ? 0 : t0;
    *last = t1 > k - 1 ? k - 1 : t1;
}

int32_t tvmk_maxpool2d_f32(const float *X, float *Y, const struct tvmk_pool2d_params *params,
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
        p->dil_w <= 0 || (p->layout != TVMK_LAYOUT_NCHW && p->layout != TVMK_LAYOUT_NHWC)) {
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
            int32_t kh0, kh1;
            tvmk_maxpool_taps(h0, p->dil_h, p->KH, 0, p->H, &kh0, &kh1);
            for (ow = 0; ow < p->OW; ++ow) {
                const int32_t w0 = ow * p->stride_w - p->pad_left;
                float best = -FLT_MAX;
                int32_t kw0, kw1;
                tvmk_maxpool_taps(w0, p->dil_w, p->KW, 0, p->W, &kw0, &kw1);
                for (kh = kh0; kh <= kh1; ++kh) {
                    const float *xr = x + (size_t)(h0 + kh * p->dil_h) * xh;
                    for (kw = kw0; kw <= kw1; ++kw) {
                        const float v = xr[(size_t)(w0 + kw * p->dil_w) * xw];
                        best = v > best ? v : best;
                    }
                }
                y[(size_t)oh * yh + (size_t)ow * yw] = best;
            }
        }
    }
    return TVM_DEVICE_OK;
}
