/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: CONV_2D int8 with a 1x1 filter over more than 16 input
 * channels, any stride, no padding, on a Cortex-M55 (conv2d_s8_mve.c takes at most 16).
 *
 * Four output pixels at a time: their input pixels (stride apart) are copied into a tile
 * in the scratch, then every output channel pair runs over it (tvmk_cm_mve_mm.h: two
 * weight rows and four tile rows a chunk of 16 channels, eight VMLADAVs). The scratch
 * holds each output channel's folded bias and requantization (20 bytes a channel), then
 * the tile (64 bytes a chunk of 16 input channels). The last one to three pixels: the
 * tile's missing rows repeat the last pixel, their stores masked.
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

int32_t tvmk_cm_conv1x1_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                               const struct tvmk_conv2d_s8_params *p)
{
    const int32_t C = p->C, M = p->M;
    const int32_t pixels = p->N * p->OH * p->OW;
    const int32_t channels_bytes = (int32_t)sizeof(struct tvmk_cm_mve_ch) * M;
    struct tvmk_cm_mve_ch *ch = (struct tvmk_cm_mve_ch *)p->scratch;
    int8_t *tile = (int8_t *)p->scratch + channels_bytes;
    struct tvmk_cm_mve_mm d;

    if (p->KH != 1 || p->KW != 1 || p->pad_top != 0 || p->pad_left != 0 || p->group != 1 ||
        C < 1 || pixels < 1 || ((uintptr_t)p->scratch & 3) != 0 ||
        (int64_t)channels_bytes + 64 * (int64_t)((C + 15) / 16) + 32 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    tvmk_cm_mve_fold(ch, W, B, C, M, p->input_offset, p->output_multiplier, p->output_shift);
    d.W = W;
    d.ch = ch;
    d.K = C;
    d.M = M;
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    const int dense = p->stride_h == 1 && p->stride_w == 1;
    for (int32_t i = 0; i < pixels; i += 4) {
        const int32_t rows = pixels - i < 4 ? pixels - i : 4;
        for (int32_t r = 0; r < 4; r++) {
            const int32_t at = i + (r < rows ? r : rows - 1);
            tvmk_cm_mve_tile_row(tile, r, dense ? X + at * C : tvmk_cm_mve_pixel(X, at, p), C);
        }
        tvmk_cm_mve_mm_tile(&d, tile, Y + i * M, M,
                            (mve_pred16_t)(0xFFFFu >> (4 * (4 - rows))));
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
