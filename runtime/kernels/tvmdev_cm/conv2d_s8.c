/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: CONV_2D int8 with few taps per output (KH x KW x C at most 32: a network's
 * first convolution, 3x3 over 3 channels). For each output row, every column's window is
 * widened to int16 into the scratch (the padding: the input's zero point; an odd count:
 * one zero more), then two output columns times two output channels at a time take one
 * SMLAD per pair of taps against the filter laid out at generation time (tvmk_cm.h).
 */
#include "tvmk_cm.h"
#include "tvmk_cm_arith.h"

/* The windows of output row oy, each `width` int16 values (taps, then zeros). */
static void tvmk_cm_conv_windows(int16_t *cols, const int8_t *x, int32_t oy, int32_t width,
                                 const struct tvmk_conv2d_s8_params *p)
{
    const int16_t zp = (int16_t)(-p->input_offset);
    for (int32_t ox = 0; ox < p->OW; ox++) {
        int16_t *dst = cols + ox * width;
        int16_t *end = dst + width;
        for (int32_t ky = 0; ky < p->KH; ky++) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky;
            for (int32_t kx = 0; kx < p->KW; kx++) {
                const int32_t ix = ox * p->stride_w - p->pad_left + kx;
                const int inside = iy >= 0 && iy < p->H && ix >= 0 && ix < p->W;
                const int8_t *src = inside ? x + (iy * p->W + ix) * p->C : x;
                for (int32_t c = 0; c < p->C; c++) {
                    *dst++ = inside ? src[c] : zp;
                }
            }
        }
        while (dst < end) {
            *dst++ = 0;
        }
    }
}

/* Output channels m and m + 1 (one when `two` is 0) of one row, `pairs` words per
 * window (a constant where it is inlined). */
static inline __attribute__((always_inline)) void
tvmk_cm_conv_channels(const int16_t *cols, int8_t *out, int32_t m, int two,
                      const struct tvmk_conv2d_s8_params *p, const int32_t pairs)
{
    const int32_t *w0 = p->packed_weights + m * pairs;
    const int32_t *w1 = two ? w0 + pairs : w0;
    const int32_t b0 = p->folded_bias[m];
    const int32_t b1 = p->folded_bias[two ? m + 1 : m];
    struct tvmk_cm_requant q0, q1;
    int32_t ox = 0;
    tvmk_cm_requant_init(&q0, p->output_multiplier[m], p->output_shift[m], p->output_offset,
                         p->activation_min, p->activation_max);
    q1 = q0;
    if (two) {
        tvmk_cm_requant_init(&q1, p->output_multiplier[m + 1], p->output_shift[m + 1],
                             p->output_offset, p->activation_min, p->activation_max);
    }
    for (; ox + 1 < p->OW; ox += 2) {
        const int16_t *c0 = cols + ox * 2 * pairs;
        const int16_t *c1 = c0 + 2 * pairs;
        int32_t a00 = b0, a01 = b1, a10 = b0, a11 = b1;
#pragma GCC unroll 16
        for (int32_t j = 0; j < pairs; j++) {
            const int32_t x0 = tvmk_cm_pair(c0 + 2 * j);
            const int32_t x1 = tvmk_cm_pair(c1 + 2 * j);
            a00 = TVMK_CM_SMLAD(x0, w0[j], a00);
            a01 = TVMK_CM_SMLAD(x0, w1[j], a01);
            a10 = TVMK_CM_SMLAD(x1, w0[j], a10);
            a11 = TVMK_CM_SMLAD(x1, w1[j], a11);
        }
        out[ox * p->M + m] = tvmk_cm_requantize(a00, &q0);
        out[(ox + 1) * p->M + m] = tvmk_cm_requantize(a10, &q0);
        if (two) {
            out[ox * p->M + m + 1] = tvmk_cm_requantize(a01, &q1);
            out[(ox + 1) * p->M + m + 1] = tvmk_cm_requantize(a11, &q1);
        }
    }
    if (ox < p->OW) {
        const int16_t *c0 = cols + ox * 2 * pairs;
        int32_t a00 = b0, a01 = b1;
        for (int32_t j = 0; j < pairs; j++) {
            const int32_t x0 = tvmk_cm_pair(c0 + 2 * j);
            a00 = TVMK_CM_SMLAD(x0, w0[j], a00);
            a01 = TVMK_CM_SMLAD(x0, w1[j], a01);
        }
        out[ox * p->M + m] = tvmk_cm_requantize(a00, &q0);
        if (two) {
            out[ox * p->M + m + 1] = tvmk_cm_requantize(a01, &q1);
        }
    }
}

/* 3x3 over 3 channels: 27 taps, 14 words (the first convolution of image networks). */
static __attribute__((noinline)) void tvmk_cm_conv_14(const int16_t *cols, int8_t *out,
                                                      int32_t m, int two,
                                                      const struct tvmk_conv2d_s8_params *p)
{
    tvmk_cm_conv_channels(cols, out, m, two, p, 14);
}

static __attribute__((noinline)) void tvmk_cm_conv_any(const int16_t *cols, int8_t *out,
                                                       int32_t m, int two, int32_t pairs,
                                                       const struct tvmk_conv2d_s8_params *p)
{
    tvmk_cm_conv_channels(cols, out, m, two, p, pairs);
}

int32_t tvmk_cm_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                          const struct tvmk_conv2d_s8_params *p, void *resource_handle)
{
    const int32_t pairs = (p->KH * p->KW * p->C + 1) / 2;
    int16_t *cols = (int16_t *)p->scratch;
    (void)W;
    (void)B;
    (void)resource_handle;

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
    /* Helium: the MVE path, whose scratch the hooks sized for it (arch mve) */
    if (p->KH * p->KW > 1) {
        return tvmk_cm_conv2d_gen_s8_mve(X, W, Y, p); /* conv2d_gen_s8_mve.c */
    }
    return tvmk_cm_conv2d_s8_mve(X, W, B, Y, p);
#endif

    if (p->KH == 1 && p->KW == 1 && p->group == 1 && p->dil_h == 1 && p->dil_w == 1) {
        return tvmk_cm_conv1x1_s8(X, W, Y, p); /* a pointwise convolution (conv1x1_s8.c) */
    }
    if (p->KH * p->KW * p->C > TVMK_CM_TAPS_MAX && p->group == 1 && p->dil_h == 1 &&
        p->dil_w == 1) {
        return tvmk_cm_conv_general_s8(X, W, Y, p); /* many taps (conv_general_s8.c) */
    }
    if (p->group != 1 || p->dil_h != 1 || p->dil_w != 1 || p->packed_weights == NULL ||
        p->folded_bias == NULL ||
        (int64_t)p->OW * 2 * pairs * (int64_t)sizeof(int16_t) > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = X + n * p->H * p->W * p->C;
        for (int32_t oy = 0; oy < p->OH; oy++) {
            int8_t *out = Y + (n * p->OH + oy) * p->OW * p->M;
            tvmk_cm_conv_windows(cols, x, oy, 2 * pairs, p);
            for (int32_t m = 0; m < p->M; m += 2) {
                const int two = m + 1 < p->M;
                if (pairs == 14) {
                    tvmk_cm_conv_14(cols, out, m, two, p);
                } else {
                    tvmk_cm_conv_any(cols, out, m, two, pairs, p);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
