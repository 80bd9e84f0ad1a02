/*
 * tvmdev portable kernels: Conv (ONNX), 2-D, NCHW, with stride, padding, dilation,
 * groups and an optional bias B.
 *
 * Direct convolution that accumulates into one output plane at a time: the plane starts
 * at the bias, then each (input channel, kh, kw) tap adds weight * input over the range
 * of output positions whose input position lies inside the image, computed up front, so
 * the inner loop has no bounds tests. Y must not overlap X.
 */
#include <stddef.h>

#include "tvmk_portable.h"

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

int32_t tvmk_conv2d_f32(const float *X, const float *W, const float *B, float *Y,
                        const struct tvmk_conv2d_params *params, void *resource_handle)
{
    const struct tvmk_conv2d_params *p = params;
    int32_t cg, mg, n, m, c, kh, kw, oh, ow, i;

    (void)resource_handle;
    if (X == NULL || W == NULL || Y == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->N < 0 || p->C < 0 || p->H < 0 || p->W < 0 || p->M < 0 || p->KH <= 0 ||
        p->KW <= 0 || p->OH < 0 || p->OW < 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
        p->dil_h <= 0 || p->dil_w <= 0 || p->group <= 0 || p->C % p->group != 0 ||
        p->M % p->group != 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    cg = p->C / p->group;
    mg = p->M / p->group;
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
        }
    }
    return TVM_DEVICE_OK;
}
