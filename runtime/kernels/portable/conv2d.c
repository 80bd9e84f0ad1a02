/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Conv (ONNX) and CONV_2D (TFLite), 2-D, NCHW or NHWC, with
 * stride, padding, dilation, groups, an optional bias B and a fused activation.
 *
 * NCHW: direct convolution that accumulates into one output plane at a time: the plane
 * starts at the bias, then each (input channel, kh, kw) tap adds weight * input over the
 * range of output positions whose input position lies inside the image, computed up
 * front, so the inner loop has no bounds tests.
 * NHWC (weights OHWI): each output pixel's M values start at the bias, then each tap
 * inside the image adds the dot product of the input pixel's channels of the group with
 * the weights' innermost, contiguous, channels.
 * Y must not overlap X.
 */
#include <stddef.h>

#include "activation.h"

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
static int32_t tvmk_conv_floor_div(int32_t a, int32_t b)
{
    int32_t q = a / b;
    if (a % b != 0 && a < 0) {
        --q;
    }
    return q;
}

static int32_t tvmk_conv_ceil_div(int32_t a, int32_t b)
{
    return -tvmk_conv_floor_div(-a, b);
}

/* The outputs o in [0, out) whose input position o * stride + offset is in [0, in):
 * *first .. *last (empty when *last < *first). */
static void tvmk_conv_range(int32_t offset, int32_t stride, int32_t in, int32_t out,
                            int32_t *first, int32_t *last)
{
    int32_t lo = tvmk_conv_ceil_div(-offset, stride);
    int32_t hi = tvmk_conv_floor_div(in - 1 - offset, stride);
    *first = lo < 0 ? 0 : lo;
    *last = hi > out - 1 ? out - 1 : hi;
}

static void tvmk_conv2d_nchw(const float *X, const float *W, const float *B, float *Y,
                             const struct tvmk_conv2d_params *p)
{
    const int32_t cg = p->C / p->group;
    const int32_t mg = p->M / p->group;
    int32_t n, m, c, kh, kw, oh, ow, i;

    for (n = 0; n < p->N; ++n) {
        for (m = 0; m < p->M; ++m) {
            const int32_t g = m / mg;
            float *y = Y + ((size_t)n * (size_t)p->M + (size_t)m) * (size_t)p->OH * (size_t)p->OW;
            const float init = B == NULL ? 0.0f : B[m];
            for (i = 0; i < p->OH * p->OW; ++i) {
                y[i] = init;
            }
            for (c = 0; c < cg; ++c) {
                const float *x = X + ((size_t)n * (size_t)p->C + (size_t)(g * cg + c)) *
                                         (size_t)p->H * (size_t)p->W;
                const float *w = W + ((size_t)m * (size_t)cg + (size_t)c) * (size_t)p->KH *
                                         (size_t)p->KW;
                for (kh = 0; kh < p->KH; ++kh) {
                    const int32_t hoff = kh * p->dil_h - p->pad_top;
                    int32_t oh0, oh1;
                    tvmk_conv_range(hoff, p->stride_h, p->H, p->OH, &oh0, &oh1);
                    for (kw = 0; kw < p->KW; ++kw) {
                        const int32_t woff = kw * p->dil_w - p->pad_left;
                        const float wv = w[kh * p->KW + kw];
                        int32_t ow0, ow1;
                        tvmk_conv_range(woff, p->stride_w, p->W, p->OW, &ow0, &ow1);
                        if (ow1 < ow0) {
                            continue;
                        }
                        for (oh = oh0; oh <= oh1; ++oh) {
                            const float *xr = x + (size_t)(oh * p->stride_h + hoff) * (size_t)p->W;
                            float *yr = y + (size_t)oh * (size_t)p->OW;
                            if (p->stride_w == 1) {
                                for (ow = ow0; ow <= ow1; ++ow) {
                                    yr[ow] += wv * xr[ow + woff];
                                }
                            } else {
                                for (ow = ow0; ow <= ow1; ++ow) {
                                    yr[ow] += wv * xr[ow * p->stride_w + woff];
                                }
                            }
                        }
                    }
                }
            }
            if (p->activation != TVMK_ACT_NONE) {
                for (i = 0; i < p->OH * p->OW; ++i) {
                    y[i] = tvmk_activate(p->activation, y[i]);
                }
            }
        }
    }
}

/* One NHWC output pixel: Y[n, oh, ow, 0..M). */
static void tvmk_conv2d_nhwc_pixel(const float *X, const float *W, const float *B, float *y,
                                   const struct tvmk_conv2d_params *p, int32_t n, int32_t oh,
                                   int32_t ow)
{
    const int32_t cg = p->C / p->group;
    const int32_t mg = p->M / p->group;
    int32_t m, c, kh, kw;

    for (m = 0; m < p->M; ++m) {
        const int32_t c0 = (m / mg) * cg;
        float acc = B == NULL ? 0.0f : B[m];
        for (kh = 0; kh < p->KH; ++kh) {
            const int32_t ih = oh * p->stride_h + kh * p->dil_h - p->pad_top;
            if (ih < 0 || ih >= p->H) {
                continue;
            }
            for (kw = 0; kw < p->KW; ++kw) {
                const int32_t iw = ow * p->stride_w + kw * p->dil_w - p->pad_left;
                const float *x, *w;
                if (iw < 0 || iw >= p->W) {
                    continue;
                }
                x = X + (((size_t)n * (size_t)p->H + (size_t)ih) * (size_t)p->W + (size_t)iw) *
                            (size_t)p->C + (size_t)c0;
                w = W + (((size_t)m * (size_t)p->KH + (size_t)kh) * (size_t)p->KW + (size_t)kw) *
                            (size_t)cg;
                for (c = 0; c < cg; ++c) {
                    acc += x[c] * w[c];
                }
            }
        }
        y[m] = tvmk_activate(p->activation, acc);
    }
}

int32_t tvmk_conv2d_f32(const float *X, const float *W, const float *B, float *Y,
                        const struct tvmk_conv2d_params *params, void *resource_handle)
{
    const struct tvmk_conv2d_params *p = params;
    int32_t n, oh, ow;

    (void)resource_handle;
    if (X == NULL || W == NULL || Y == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->N < 0 || p->C < 0 || p->H < 0 || p->W < 0 || p->M < 0 || p->KH <= 0 ||
        p->KW <= 0 || p->OH < 0 || p->OW < 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
        p->dil_h <= 0 || p->dil_w <= 0 || p->group <= 0 || p->C % p->group != 0 ||
        p->M % p->group != 0 || !tvmk_act_valid(p->activation) ||
        (p->layout != TVMK_LAYOUT_NCHW && p->layout != TVMK_LAYOUT_NHWC)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->layout == TVMK_LAYOUT_NCHW) {
        tvmk_conv2d_nchw(X, W, B, Y, p);
        return TVM_DEVICE_OK;
    }
    for (n = 0; n < p->N; ++n) {
        for (oh = 0; oh < p->OH; ++oh) {
            for (ow = 0; ow < p->OW; ++ow) {
                float *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oh) * (size_t)p->OW +
                                (size_t)ow) * (size_t)p->M;
                tvmk_conv2d_nhwc_pixel(X, W, B, y, p, n, oh, ow);
            }
        }
    }
    return TVM_DEVICE_OK;
}
