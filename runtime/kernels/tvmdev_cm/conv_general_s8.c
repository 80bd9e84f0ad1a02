/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: CONV_2D int8 with many taps per output channel (KH x KW x C beyond the
 * first-convolution kernel's 32: 3x3 over 16 channels and up), any filter size, stride
 * and padding. Each output pixel's window is a 1x1 convolution over its KH x KW x C taps
 * (the filter's row, column, channel order: OHWI's), so the 1x1's group cores
 * (conv1x1_s8.c, tvmk_cm_1x1.h) run it unchanged: the window is widened into the scratch
 * in the order SXTB16 gives (per quad of taps, the even pair then the odd one), padding
 * holding the input's zero point, so that the bias folded with input_offset times the sum
 * of the taps is TFLM's accumulator exactly. With the widened filter (packed_weights, as
 * a 1x1's over the taps) one pixel at a time; with the int8 filter (packed_weights NULL,
 * records in folded_bias, taps a multiple of 4) four pixels, interleaved, so that each
 * filter word serves the four.
 */
#include <string.h>

#include "tvmk_cm.h"
#include "tvmk_cm_1x1.h"

/* n int8 values (a multiple of 4) at src as pairs of words (even, odd), `step` words
 * from one quad's pair to the next. */
static inline void tvmk_cm_win_widen(int32_t *dst, int32_t step, const int8_t *src, int32_t n)
{
    for (int32_t c = 0; c < n; c += 4, dst += step) {
        int32_t v;
        memcpy(&v, src + c, sizeof v);
        dst[0] = TVMK_CM_EVEN(v);
        dst[1] = TVMK_CM_ODD(v);
    }
}

/* One window row's KW x C values at input row iy into buf (int8), the zero point where
 * a column falls outside the input. */
static void tvmk_cm_win_gather(int8_t *buf, const int8_t *x, int32_t iy, int32_t ix0, int8_t zp,
                               const struct tvmk_conv2d_s8_params *p)
{
    for (int32_t kx = 0; kx < p->KW; kx++, buf += p->C) {
        const int32_t ix = ix0 + kx;
        if (iy >= 0 && iy < p->H && ix >= 0 && ix < p->W) {
            memcpy(buf, x + (iy * p->W + ix) * p->C, (size_t)p->C);
        } else {
            memset(buf, zp, (size_t)p->C);
        }
    }
}

/* The window of output pixel (oy, ox) of image x, widened at dst (`step` words from one
 * quad to the next); buf: the taps' bytes rounded up to 4, for what is gathered first
 * (a row that leaves the input at a side; every row when a row is not whole quads). */
static void tvmk_cm_window(int32_t *dst, int32_t step, const int8_t *x, int32_t oy, int32_t ox,
                           int8_t *buf, const struct tvmk_conv2d_s8_params *p)
{
    const int32_t len = p->KW * p->C;
    const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
    const int8_t zp = (int8_t)(-p->input_offset);
    if (len % 4 == 0) {
        const int inside = ix0 >= 0 && ix0 + p->KW <= p->W;
        const int32_t pad = TVMK_CM_EVEN((uint32_t)(uint8_t)zp * 0x01010101u);
        for (int32_t ky = 0; ky < p->KH; ky++, dst += step * (len / 4)) {
            const int32_t iy = iy0 + ky;
            if (iy < 0 || iy >= p->H) {
                int32_t *d = dst;
                for (int32_t j = 0; j < len / 4; j++, d += step) {
                    d[0] = pad;
                    d[1] = pad;
                }
            } else if (inside) {
                tvmk_cm_win_widen(dst, step, x + (iy * p->W + ix0) * p->C, len);
            } else {
                tvmk_cm_win_gather(buf, x, iy, ix0, zp, p);
                tvmk_cm_win_widen(dst, step, buf, len);
            }
        }
        return;
    }
    {
        /* rows that end inside a quad: the whole window gathered, then zeros to a quad */
        const int32_t taps = p->KH * len;
        for (int32_t ky = 0; ky < p->KH; ky++) {
            tvmk_cm_win_gather(buf + ky * len, x, iy0 + ky, ix0, zp, p);
        }
        memset(buf + taps, 0, (size_t)((4 - taps % 4) % 4));
        tvmk_cm_win_widen(dst, step, buf, (taps + 3) / 4 * 4);
    }
}

/* The widened filter: one pixel at a time through the 1x1's group cores. */
static void tvmk_cm_conv_general_wide(const int8_t *X, int8_t *Y,
                                      const struct tvmk_conv2d_s8_params *p,
                                      const struct tvmk_conv2d_s8_params *q, int32_t quads)
{
    int32_t *xs = (int32_t *)p->scratch;
    int8_t *buf = (int8_t *)(xs + 2 * quads);
    const int full = p->activation_min == -128 && p->activation_max == 127;
    const int mixed = tvmk_cm_1x1_mixed_shifts(q, quads);
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = X + n * p->H * p->W * p->C;
        int8_t *out = Y + n * p->OH * p->OW * p->M;
        for (int32_t oy = 0; oy < p->OH; oy++) {
            for (int32_t ox = 0; ox < p->OW; ox++, out += p->M) {
                tvmk_cm_window(xs, 2, x, oy, ox, buf, p);
                if (mixed) {
                    tvmk_cm_1x1_mixed(xs, out, q, quads);
                } else if (full) {
                    tvmk_cm_1x1_full(xs, out, q, quads);
                } else {
                    tvmk_cm_1x1_clamped(xs, out, q, quads);
                }
            }
        }
    }
}

/* The int8 filter: four pixels at a time, each window's quads interleaved (pixel k's
 * pair at words 2k, 2k + 1 of each quad's eight); a short last tile repeats its first. */
static void tvmk_cm_conv_general_int8(const int8_t *X, const int8_t *W, int8_t *Y,
                                      const struct tvmk_conv2d_s8_params *p,
                                      const struct tvmk_conv2d_s8_params *q, int32_t quads)
{
    int32_t *xs = (int32_t *)p->scratch;
    int8_t *buf = (int8_t *)(xs + 8 * quads);
    const int full = p->activation_min == -128 && p->activation_max == 127;
    const int32_t pixels = p->OH * p->OW;
    for (int32_t b = 0; b < p->N; b++) {
        const int8_t *x = X + b * p->H * p->W * p->C;
        int8_t *out = Y + b * pixels * p->M;
        for (int32_t i = 0; i < pixels; i += 4) {
            const int32_t n = pixels - i < 4 ? pixels - i : 4;
            for (int32_t k = 0; k < 4; k++) {
                const int32_t at = i + (k < n ? k : 0);
                tvmk_cm_window(xs + 2 * k, 8, x, at / p->OW, at % p->OW, buf, p);
            }
            if (full) {
                tvmk_cm_1x1_full8(xs, W, out + i * p->M, q, n);
            } else {
                tvmk_cm_1x1_clamped8(xs, W, out + i * p->M, q, n);
            }
        }
    }
}

int32_t tvmk_cm_conv_general_s8(const int8_t *X, const int8_t *W, int8_t *Y,
                                const struct tvmk_conv2d_s8_params *p)
{
    const int32_t taps = p->KH * p->KW * p->C;
    const int32_t quads = (taps + 3) / 4;
    const int wide = p->packed_weights != NULL;
    /* as a 1x1 convolution over the window's taps */
    struct tvmk_conv2d_s8_params q = *p;
    q.C = taps;
    if ((int64_t)(wide ? 8 : 32) * quads + 4 * quads > p->scratch_bytes ||
        (!wide && (p->folded_bias == NULL || taps % 4 != 0))) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    if (wide) {
        tvmk_cm_conv_general_wide(X, Y, p, &q, quads);
    } else {
        tvmk_cm_conv_general_int8(X, W, Y, p, &q, quads);
    }
    return TVM_DEVICE_OK;
}
