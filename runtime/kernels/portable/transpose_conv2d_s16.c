/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16 (16x8): TRANSPOSE_CONV (NHWC, W [M, KH, KW, C / group],
 * int8 weights, int64 bias, per-channel requantization) as TFLM's
 * reference_integer_ops::TransposeConv of int16 input: int64 sums of x * w (no offsets:
 * tvmdev refuses a nonzero zero point, which TFLM's kernel would ignore), plus the bias,
 * requantized by the int64 MultiplyByQuantizedMultiplier and clamped. The params are
 * tvmk_conv2d_s8_params (pad_top / pad_left: where input pixel 0 lands before the output).
 * Each output value is one sum over the input pixels that reach it (an integer sum, so
 * TFLM's scatter order gives the same), without TFLM's int64 scratch. Y must not overlap X.
 */
#include <stddef.h>

#include "transpose_conv2d.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

static int64_t tvmk_tconv_sum_s16(const int16_t *X, const int8_t *W,
                                  const struct tvmk_conv2d_s8_params *p, int32_t n, int32_t oy,
                                  int32_t ox, int32_t m)
{
    const int32_t cg = p->C / p->group, c0 = (m / (p->M / p->group)) * cg;
    int64_t acc = 0;
    int32_t ky, kx, c;

    for (ky = 0; ky < p->KH; ++ky) {
        const int32_t iy = tvmk_tconv_source(oy, ky, p->stride_h, p->pad_top, p->dil_h, p->H);
        if (iy < 0) {
            continue;
        }
        for (kx = 0; kx < p->KW; ++kx) {
            const int32_t ix = tvmk_tconv_source(ox, kx, p->stride_w, p->pad_left, p->dil_w,
                                                 p->W);
            const int16_t *x;
            const int8_t *w;
            if (ix < 0) {
                continue;
            }
            x = X + (((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W + (size_t)ix) *
                        (size_t)p->C + (size_t)c0;
            w = W + (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW + (size_t)kx) *
                        (size_t)cg;
            for (c = 0; c < cg; ++c) {
                acc += (int64_t)((int32_t)x[c] * (int32_t)w[c]);
            }
        }
    }
    return acc;
}

int32_t tvmk_transpose_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B,
                                  int16_t *Y, const struct tvmk_conv2d_s8_params *params,
                                  void *resource_handle)
{
    const struct tvmk_conv2d_s8_params *p = params;
    int32_t n, oy, ox, m;

    (void)resource_handle;
    if (X == NULL || W == NULL || Y == NULL || p == NULL || p->output_multiplier == NULL ||
        p->output_shift == NULL || p->group < 1 || p->C % p->group != 0 ||
        p->M % p->group != 0 || p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 ||
        p->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                int16_t *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW +
                                  (size_t)ox) * (size_t)p->M;
                for (m = 0; m < p->M; ++m) {
                    int64_t acc = tvmk_tconv_sum_s16(X, W, p, n, oy, ox, m);
                    int32_t v;
                    if (B != NULL) {
                        acc += B[m];
                    }
                    v = tvmk_multiply_by_quantized_multiplier_64(acc, p->output_multiplier[m],
                                                                 (int)p->output_shift[m]) +
                        p->output_offset;
                    v = v < p->activation_min ? p->activation_min : v;
                    y[m] = (int16_t)(v > p->activation_max ? p->activation_max : v);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
