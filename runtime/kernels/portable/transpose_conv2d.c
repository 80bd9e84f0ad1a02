/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: transposed convolution, float32 (tvmk_conv2d_params read as
 * transpose_conv2d's: pad_top / pad_left are where input pixel 0 lands before the
 * output), NCHW with ONNX's W [C, M / group, KH, KW] or NHWC with TFLite's
 * W [M, KH, KW, C / group]; an optional bias B and a fused activation. Each output value
 * is one sum over the input pixels that reach it. Y must not overlap X.
 */
#include <stddef.h>

#include "activation.h"
#include "transpose_conv2d.h"
#include "tvmk_portable.h"

static size_t x_at(const struct tvmk_conv2d_params *p, int32_t n, int32_t y, int32_t x,
                   int32_t c)
{
    if (p->layout == TVMK_LAYOUT_NHWC) {
        return (((size_t)n * (size_t)p->H + (size_t)y) * (size_t)p->W + (size_t)x) *
                   (size_t)p->C + (size_t)c;
    }
    return (((size_t)n * (size_t)p->C + (size_t)c) * (size_t)p->H + (size_t)y) *
               (size_t)p->W + (size_t)x;
}

/* The weight of output channel m and input channel c0 + c (c of m's group). */
static size_t w_at(const struct tvmk_conv2d_params *p, int32_t m, int32_t ky, int32_t kx,
                   int32_t c0, int32_t c)
{
    const size_t mg = (size_t)(p->M / p->group);

    if (p->layout == TVMK_LAYOUT_NHWC) {
        return (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW + (size_t)kx) *
                   (size_t)(p->C / p->group) + (size_t)c;
    }
    return ((((size_t)c0 + (size_t)c) * mg + (size_t)m % mg) * (size_t)p->KH + (size_t)ky) *
               (size_t)p->KW + (size_t)kx;
}

static size_t y_at(const struct tvmk_conv2d_params *p, int32_t n, int32_t y, int32_t x,
                   int32_t m)
{
    if (p->layout == TVMK_LAYOUT_NHWC) {
        return (((size_t)n * (size_t)p->OH + (size_t)y) * (size_t)p->OW + (size_t)x) *
                   (size_t)p->M + (size_t)m;
    }
    return (((size_t)n * (size_t)p->M + (size_t)m) * (size_t)p->OH + (size_t)y) *
               (size_t)p->OW + (size_t)x;
}

/* The sum for output (n, oy, ox, m) over its group's input channels. */
static float tvmk_tconv_sum(const float *X, const float *W, const struct tvmk_conv2d_params *p,
                            int32_t n, int32_t oy, int32_t ox, int32_t m)
{
    const int32_t cg = p->C / p->group, c0 = (m / (p->M / p->group)) * cg;
    float acc = 0.0f;
    int32_t ky, kx, c;

    for (ky = 0; ky < p->KH; ++ky) {
        const int32_t iy = tvmk_tconv_source(oy, ky, p->stride_h, p->pad_top, p->dil_h, p->H);
        if (iy < 0) {
            continue;
        }
        for (kx = 0; kx < p->KW; ++kx) {
            const int32_t ix = tvmk_tconv_source(ox, kx, p->stride_w, p->pad_left, p->dil_w,
                                                 p->W);
            if (ix < 0) {
                continue;
            }
            for (c = 0; c < cg; ++c) {
                acc += X[x_at(p, n, iy, ix, c0 + c)] * W[w_at(p, m, ky, kx, c0, c)];
            }
        }
    }
    return acc;
}

int32_t tvmk_transpose_conv2d_f32(const float *X, const float *W, const float *B, float *Y,
                                  const struct tvmk_conv2d_params *params,
                                  void *resource_handle)
{
    const struct tvmk_conv2d_params *p = params;
    int32_t n, oy, ox, m;

    (void)resource_handle;
    if (X == NULL || W == NULL || Y == NULL || p == NULL || p->group < 1 ||
        p->C % p->group != 0 || p->M % p->group != 0 || p->stride_h < 1 ||
        p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1 || !tvmk_act_valid(p->activation)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                for (m = 0; m < p->M; ++m) {
                    float acc = tvmk_tconv_sum(X, W, p, n, oy, ox, m);
                    if (B != NULL) {
                        acc += B[m];
                    }
                    Y[y_at(p, n, oy, ox, m)] = tvmk_activate(p->activation, acc);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
