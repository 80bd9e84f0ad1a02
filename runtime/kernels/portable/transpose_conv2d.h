/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: what the transposed-convolution kernels share
 * (transpose_conv2d.c, transpose_conv2d_s8.c, transpose_conv2d_s16.c). Private to this
 * folder. Input row iy and filter row ky reach output row iy * stride - pad + ky * dil;
 * the kernels compute each output value once, over the (iy, ky) that reach it, so they
 * need no accumulator. The int8 and int16 kernels are one body (TVMK_TCONV_INT)
 * instantiated per type.
 */
#ifndef TVMK_PORTABLE_TRANSPOSE_CONV2D_H_
#define TVMK_PORTABLE_TRANSPOSE_CONV2D_H_

#include <stddef.h>
#include <stdint.h>

/* The input row (or column) that filter row k brings onto output row o, or -1. */
static inline int32_t tvmk_tconv_source(int32_t o, int32_t k, int32_t stride, int32_t pad,
                                        int32_t dil, int32_t size)
{
    const int32_t t = o + pad - k * dil;

    if (t < 0 || t % stride != 0 || t / stride >= size) {
        return -1;
    }
    return t / stride;
}

/* The integer kernel `name` (tvmk_conv2d_s8_params; int8 weights): each output value is
 * the sum, in acc_t, of (x + offset) * w over the input pixels that reach it, plus the
 * bias (bias_t), requantized by requant (tvmk_fixedpoint.h's, taking an acc_t), offset,
 * clamped to the activation range and stored as out_t. The check of the params, the
 * walk and the arithmetic are the same for every type; only the types, the input offset
 * (int16: none, as TFLM's kernel) and the requantization's width differ. Y must not
 * overlap X. */
#define TVMK_TCONV_INT(name, x_t, bias_t, acc_t, offset, requant)                            \
    static acc_t name##_sum(const x_t *X, const int8_t *W,                                   \
                            const struct tvmk_conv2d_s8_params *p, int32_t n, int32_t oy,    \
                            int32_t ox, int32_t m)                                           \
    {                                                                                        \
        const int32_t cg = p->C / p->group, c0 = (m / (p->M / p->group)) * cg;               \
        acc_t acc = 0;                                                                       \
        int32_t ky, kx, c;                                                                   \
                                                                                             \
        for (ky = 0; ky < p->KH; ++ky) {                                                     \
            const int32_t iy = tvmk_tconv_source(oy, ky, p->stride_h, p->pad_top, p->dil_h,  \
                                                 p->H);                                      \
            if (iy < 0) {                                                                    \
                continue;                                                                    \
            }                                                                                \
            for (kx = 0; kx < p->KW; ++kx) {                                                 \
                const int32_t ix = tvmk_tconv_source(ox, kx, p->stride_w, p->pad_left,       \
                                                     p->dil_w, p->W);                        \
                const x_t *x;                                                                \
                const int8_t *w;                                                             \
                if (ix < 0) {                                                                \
                    continue;                                                                \
                }                                                                            \
                x = X + (((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W +            \
                         (size_t)ix) * (size_t)p->C + (size_t)c0;                            \
                w = W + (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW +          \
                         (size_t)kx) * (size_t)cg;                                           \
                for (c = 0; c < cg; ++c) {                                                   \
                    acc += (acc_t)(((int32_t)x[c] + (offset)) * (int32_t)w[c]);              \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return acc;                                                                          \
    }                                                                                        \
                                                                                             \
    int32_t name(const x_t *X, const int8_t *W, const bias_t *B, x_t *Y,                     \
                 const struct tvmk_conv2d_s8_params *params, void *resource_handle)          \
    {                                                                                        \
        const struct tvmk_conv2d_s8_params *p = params;                                      \
        int32_t n, oy, ox, m;                                                                \
                                                                                             \
        (void)resource_handle;                                                               \
        if (X == NULL || W == NULL || Y == NULL || p == NULL ||                              \
            p->output_multiplier == NULL || p->output_shift == NULL || p->group < 1 ||       \
            p->C % p->group != 0 || p->M % p->group != 0 || p->stride_h < 1 ||               \
            p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {                               \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        for (n = 0; n < p->N; ++n) {                                                         \
            for (oy = 0; oy < p->OH; ++oy) {                                                 \
                for (ox = 0; ox < p->OW; ++ox) {                                             \
                    x_t *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW + \
                                  (size_t)ox) * (size_t)p->M;                                \
                    for (m = 0; m < p->M; ++m) {                                             \
                        acc_t acc = name##_sum(X, W, p, n, oy, ox, m);                       \
                        int32_t v;                                                           \
                        if (B != NULL) {                                                     \
                            acc += B[m];                                                     \
                        }                                                                    \
                        v = requant(acc, p->output_multiplier[m], (int)p->output_shift[m]) + \
                            p->output_offset;                                                \
                        v = v < p->activation_min ? p->activation_min : v;                   \
                        y[m] = (x_t)(v > p->activation_max ? p->activation_max : v);         \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#endif /* TVMK_PORTABLE_TRANSPOSE_CONV2D_H_ */
