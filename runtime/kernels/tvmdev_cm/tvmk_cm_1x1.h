/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The group cores of tvmdev_cm's 1x1 convolution (conv1x1_s8.c), shared with its general
 * convolution (conv_general_s8.c), which runs them over each output pixel's window as a
 * 1x1 convolution over the window's taps. Internal to the library: params' C is the
 * taps per output channel, and xs the widened pixel (or four, interleaved), as
 * conv1x1_s8.c lays them out (tvmk_cm.h).
 */
#ifndef TVMK_CM_1X1_H_
#define TVMK_CM_1X1_H_

#include <stdint.h>

#include "tvmk_cm.h"
#include "tvmk_cm_arith.h"

/* SXTB16 of v, and of v rotated by 8: bytes 0 and 2, and bytes 1 and 3, sign-extended
 * to int16 halves. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMK_CM_EVEN(v) ((int32_t)__sxtb16((uint32_t)(v)))
#define TVMK_CM_ODD(v) ((int32_t)__sxtb16(((uint32_t)(v) >> 8) | ((uint32_t)(v) << 24)))
#else
static inline int32_t tvmk_cm_sxtb16(uint32_t v)
{
    const uint32_t lo = (uint32_t)(int32_t)(int8_t)(v & 0xFFu) & 0xFFFFu;
    const uint32_t hi = (uint32_t)(int32_t)(int8_t)((v >> 16) & 0xFFu) << 16;
    return (int32_t)(lo | hi);
}
#define TVMK_CM_EVEN(v) tvmk_cm_sxtb16((uint32_t)(v))
#define TVMK_CM_ODD(v) tvmk_cm_sxtb16((uint32_t)(v) >> 8)
#endif

/* The widened filter (packed_weights): every output channel of one pixel, `quads` pairs
 * of words at xs; per clamp (full: int8's whole range), and for layers with a channel
 * whose right shift is 0 (mixed: tvmk_cm_1x1_mixed_shifts). */
void tvmk_cm_1x1_full(const int32_t *xs, int8_t *out, const struct tvmk_conv2d_s8_params *p,
                      int32_t quads);
void tvmk_cm_1x1_clamped(const int32_t *xs, int8_t *out, const struct tvmk_conv2d_s8_params *p,
                         int32_t quads);
void tvmk_cm_1x1_mixed(const int32_t *xs, int8_t *out, const struct tvmk_conv2d_s8_params *p,
                       int32_t quads);
int tvmk_cm_1x1_mixed_shifts(const struct tvmk_conv2d_s8_params *p, int32_t quads);
/* The int8 filter W (records in folded_bias): every output channel of up to four pixels
 * (n), widened and interleaved per quad at xs (eight words a quad). */
void tvmk_cm_1x1_full8(const int32_t *xs, const int8_t *W, int8_t *out,
                       const struct tvmk_conv2d_s8_params *p, int32_t n);
void tvmk_cm_1x1_clamped8(const int32_t *xs, const int8_t *W, int8_t *out,
                          const struct tvmk_conv2d_s8_params *p, int32_t n);

#endif /* TVMK_CM_1X1_H_ */
