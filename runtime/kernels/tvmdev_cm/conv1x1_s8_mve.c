/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: CONV_2D int8 with a 1x1 filter over more than 16 input
 * channels (16 to more than 16 outputs), or strided, no padding, on a Cortex-M55
 * (conv2d_s8_mve.c takes the rest).
 *
 * Four output pixels at a time: their input pixels (stride apart) are copied into a tile
 * in the scratch, then every output channel pair runs over it (tvmk_cm_mve_mm.h: two
 * weight rows and four tile rows a chunk of 16 channels, eight VMLADAVs). The scratch
 * holds each output channel's folded bias and requantization (20 bytes a channel, one
 * more), then the tile (64 bytes a chunk of 16 input channels), the pass's eight sums (32
 * bytes) and 8 bytes where an odd M's last channel is staged. The last one to three
 * pixels: the tile's missing rows repeat the last pixel, and so do their stores.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <stddef.h>

#include "tvmk_cm_mve_mm.h"

/* The input pixel of output pixel i (image, row, column). */
static inline const int8_t *tvmk_cm_mve_pixel(const int8_t *X, int32_t i,
                                              const struct tvmk_conv2d_s8_params *p)
{
    const int32_t plane = p->OH * p->OW;
    const int32_t n = i / plane, oy = (i % plane) / p->OW, ox = i % p->OW;
    return X + ((n * p->H + oy * p->stride_h) * p->W + ox * p->stride_w) * p->C;
}

/* Output channel M - 1 of an odd M (the pass's second channel repeats it): into the
 * staging bytes (rows 2 apart), then row r's to out + r * M. */
static void tvmk_cm_mve_last_channel(struct tvmk_cm_mve_pass *s, const int8_t *W, int8_t *out,
                                     int8_t *staging, int32_t rows, int32_t M, int32_t C,
                                     const struct tvmk_cm_mve_ch *ch)
{
    s->w = W + (M - 1) * C;
    s->w_second = 0;
    s->ch = ch + M - 1;
    s->end = ch + M + 1;
    s->out = staging;
    for (int32_t r = 0; r < 4; r++) {
        s->rows[r] = (uint32_t)(2 * r);
    }
    tvmk_cm_mve_mm_pass(s);
    for (int32_t r = 0; r < rows; r++) {
        out[r * M + M - 1] = staging[2 * r];
    }
}

int32_t tvmk_cm_conv1x1_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                               const struct tvmk_conv2d_s8_params *p)
{
    const int32_t C = p->C, M = p->M;
    const int32_t pixels = p->N * p->OH * p->OW;
    const int32_t chunks = (C + 15) / 16;
    /* M + 1 channels' constants (the last read, not used, by an odd M's last pass) */
    const int32_t channels_bytes = (int32_t)sizeof(struct tvmk_cm_mve_ch) * (M + 1);
    struct tvmk_cm_mve_ch *ch = (struct tvmk_cm_mve_ch *)p->scratch;
    int8_t *tile = (int8_t *)p->scratch + channels_bytes;
    int8_t *staging = tile + 64 * chunks + 32; /* past the tile and the pass's sums */
    struct tvmk_cm_mve_pass s;

    if (p->KH != 1 || p->KW != 1 || p->pad_top != 0 || p->pad_left != 0 || p->group != 1 ||
        C < 1 || M < 1 || pixels < 1 || ((uintptr_t)p->scratch & 3) != 0 ||
        (int64_t)channels_bytes + 64 * (int64_t)chunks + 40 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    tvmk_cm_mve_fold(ch, W, B, C, M, p->input_offset, p->output_multiplier, p->output_shift);
    s.tile = tile;
    s.chunks = C / 16;
    s.tail = C % 16;
    s.output_offset = p->output_offset;
    for (int32_t r = 0; r < 4; r++) {
        s.lo[r] = p->activation_min;
        s.hi[r] = p->activation_max;
    }
    const int dense = p->stride_h == 1 && p->stride_w == 1;
    for (int32_t i = 0; i < pixels; i += 4) {
        const int32_t rows = pixels - i < 4 ? pixels - i : 4;
        for (int32_t r = 0; r < 4; r++) {
            const int32_t at = i + (r < rows ? r : rows - 1);
            tvmk_cm_mve_tile_row(tile, r, dense ? X + at * C : tvmk_cm_mve_pixel(X, at, p), C);
        }
        if (M >= 2) { /* a missing row repeats the last: its stores go where the last's do */
            for (int32_t r = 0; r < 4; r++) {
                s.rows[r] = (uint32_t)((r < rows ? r : rows - 1) * M);
            }
            s.w = W;
            s.w_second = C;
            s.ch = ch;
            s.end = ch + M / 2 * 2;
            s.out = Y + i * M;
            tvmk_cm_mve_mm_pass(&s);
        }
        if (M % 2 != 0) {
            tvmk_cm_mve_last_channel(&s, W, Y + i * M, staging, rows, M, C, ch);
        }
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_conv1x1_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                               const struct tvmk_conv2d_s8_params *p)
{
    (void)X;
    (void)W;
    (void)B;
    (void)Y;
    (void)p;
    return TVM_DEVICE_ERR_INVALID; /* no MVE: the hooks declined this path */
}

#endif
