/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: CONV_2D (NHWC, per-channel requantization) as TFLM's
 * reference_integer_ops::ConvPerChannel. Y must not overlap X.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

static int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift, int32_t offset,
                          int32_t lo, int32_t hi)
{
    acc = tvmk_multiply_by_quantized_multiplier(acc, multiplier, (int)shift) + offset;
    acc = acc < lo ? lo : acc;
    return acc > hi ? hi : acc;
}

/* The sum over one output position's window for output channel m (group's channels). */
static int32_t window_sum(const int8_t *X, const int8_t *W,
                          const struct tvmk_conv2d_s8_params *p, int32_t n, int32_t oy,
                          int32_t ox, int32_t m)
{
    const int32_t cg = p->C / p->group;
    const int32_t c0 = (m / (p->M / p->group)) * cg;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    int32_t acc = 0;
    int32_t ky, kx, c;

    for (ky = 0; ky < p->KH; ++ky) {
        const int32_t iy = y0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->H) {
            continue;
        }
        for (kx = 0; kx < p->KW; ++kx) {
            const int32_t ix = x0 + kx * p->dil_w;
            const int8_t *x;
            const int8_t *w;
            if (ix < 0 || ix >= p->W) {
                continue;
            }
            x = X + (((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W + (size_t)ix) *
                        (size_t)p->C + (size_t)c0;
            w = W + (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW + (size_t)kx) *
                        (size_t)cg;
            for (c = 0; c < cg; ++c) {
                acc += (int32_t)w[c] * ((int32_t)x[c] + p->input_offset);
            }
        }
    }
    return acc;
}

int32_t tvmk_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                       const struct tvmk_conv2d_s8_params *params, void *resource_handle)
{
    const struct tvmk_conv2d_s8_params *p = params;
    int32_t n, oy, ox, m;

    (void)resource_handle;
    if (X == NULL || W == NULL || Y == NULL || p == NULL || p->output_multiplier == NULL ||
        p->output_shift == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->group < 1 || p->C % p->group != 0 || p->M % p->group != 0 || p->stride_h < 1 ||
        p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                int8_t *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW +
                                 (size_t)ox) * (size_t)p->M;
                for (m = 0; m < p->M; ++m) {
                    int32_t acc = window_sum(X, W, p, n, oy, ox, m);
                    if (B != NULL) {
                        acc += B[m];
                    }
                    y[m] = (int8_t)requantize(acc, p->output_multiplier[m], p->output_shift[m],
                                              p->output_offset, p->activation_min,
                                              p->activation_max);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
