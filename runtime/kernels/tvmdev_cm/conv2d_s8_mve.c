/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: CONV_2D int8 with a 1x1 filter, stride 1, no padding and
 * at most 16 input channels (more, 16 to more than 16 outputs, or strided:
 * conv1x1_s8_mve.c), on a Cortex-M55 (tvmk_cm.h).
 *
 * A pixel's channels are one vector (VLDRB, predicated by VCTP past the C-th byte, the
 * other lanes zero), so four pixels' inputs stay in four registers while every output
 * channel passes over them: one VLDRB of the channel's weights (a row of the OHWI filter:
 * no layout needed) and four VMLADAVs, each a whole dot product. CMSIS-NN v7's MVE 1x1
 * path (arm_nn_mat_mult_nt_t_s8) reloads the four pixels and sums the weights (VADDVA) for
 * every output channel. The bias is folded with input_offset times the sum of the
 * channel's weights once per call, into the scratch (4 bytes an output channel): sum(w *
 * x) + bias + input_offset * sum(w) is TFLM's accumulator, both wrapping modulo 2^32.
 * Requantization is TFLM's MultiplyByQuantizedMultiplier exactly, four pixels a vector
 * (as the depthwise path's); the four outputs are stored M bytes apart by a scatter.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

/* One output channel's constants, set once per call in the scratch. */
struct tvmk_cm_mve_pw_ch {
    int32_t bias; /* folded with input_offset times the sum of the channel's weights */
    int32_t multiplier, left, neg_right, rounds; /* rounds: 1 when right > 0, else 0 */
};

/* What the loops read, copied out of the params (stores through an int8 pointer would
 * otherwise make the compiler read them again). */
struct tvmk_cm_mve_pw {
    const int8_t *W;
    const struct tvmk_cm_mve_pw_ch *ch;
    int32_t C, M, safe; /* safe: the channels whose 16-byte weight load stays in W */
    int32_t output_offset, activation_min, activation_max;
};

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators, then the offset and clamp. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mve_pw_requantize(int32x4_t x, const struct tvmk_cm_mve_pw_ch *c, int32_t offset,
                          int32x4_t lo, int32x4_t hi)
{
    x = vqrdmulhq_n_s32(vshlq_r_s32(x, c->left), c->multiplier);
    x = vqaddq_s32(x, vmulq_n_s32(vshrq_n_s32(x, 31), c->rounds));
    x = vaddq_n_s32(vrshlq_n_s32(x, c->neg_right), offset);
    return vminq_s32(vmaxq_s32(x, lo), hi);
}

/* Output channel m of four pixels x0..x3 (their lanes past C zero, so the weights' are
 * multiplied by zero and need no predicate). */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mve_pw_dots(int8x16_t w, int8x16_t x0, int8x16_t x1, int8x16_t x2, int8x16_t x3,
                    int32_t bias)
{
    int32x4_t acc = vuninitializedq_s32();
    acc = vsetq_lane_s32(vmladavq_s8(x0, w), acc, 0);
    acc = vsetq_lane_s32(vmladavq_s8(x1, w), acc, 1);
    acc = vsetq_lane_s32(vmladavq_s8(x2, w), acc, 2);
    acc = vsetq_lane_s32(vmladavq_s8(x3, w), acc, 3);
    return vaddq_n_s32(acc, bias);
}

/* Output channel m's four outputs, stored M bytes apart (the lanes `lanes` keeps). */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_pw_one(const struct tvmk_cm_mve_pw *d, int8x16_t wv, int8x16_t x0, int8x16_t x1,
                   int8x16_t x2, int8x16_t x3, const struct tvmk_cm_mve_pw_ch *c,
                   int8_t *out, uint32x4_t scatter, int32x4_t lo, int32x4_t hi,
                   mve_pred16_t lanes)
{
    const int32x4_t v = tvmk_cm_mve_pw_requantize(tvmk_cm_mve_pw_dots(wv, x0, x1, x2, x3, c->bias),
                                                  c, d->output_offset, lo, hi);
    vstrbq_scatter_offset_p_s32(out, scatter, v, lanes);
}

/* Four pixels (their first input byte at x, outputs at out), every output channel, the
 * stores predicated by `lanes` (all but the last, partial quad's: every lane). */
static __attribute__((noinline)) void
tvmk_cm_mve_pw_quad(const struct tvmk_cm_mve_pw *d, const int8_t *x, int8_t *out,
                    uint32x4_t scatter, mve_pred16_t lanes)
{
    const int32_t C = d->C;
    const mve_pred16_t in = vctp8q((uint32_t)C);
    const int8x16_t x0 = vldrbq_z_s8(x, in);
    const int8x16_t x1 = vldrbq_z_s8(x + C, in);
    const int8x16_t x2 = vldrbq_z_s8(x + 2 * C, in);
    const int8x16_t x3 = vldrbq_z_s8(x + 3 * C, in);
    const int32x4_t lo = vdupq_n_s32(d->activation_min);
    const int32x4_t hi = vdupq_n_s32(d->activation_max);
    const struct tvmk_cm_mve_pw_ch *c = d->ch;
    const int8_t *w = d->W;
    const int32_t M = d->M, safe = d->safe;
    int32_t m = 0;
    for (; m < safe; m++, c++, w += C) {
        tvmk_cm_mve_pw_one(d, vldrbq_s8(w), x0, x1, x2, x3, c, out + m, scatter, lo, hi, lanes);
    }
    for (; m < M; m++, c++, w += C) { /* the last rows: a load within the weights */
        tvmk_cm_mve_pw_one(d, vldrbq_z_s8(w, in), x0, x1, x2, x3, c, out + m, scatter, lo, hi,
                           lanes);
    }
}

int32_t tvmk_cm_conv2d_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                              const struct tvmk_conv2d_s8_params *p)
{
    const int32_t C = p->C;
    const int32_t pixels = p->N * p->OH * p->OW;
    const mve_pred16_t in = vctp8q((uint32_t)C);
    const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)p->M);
    struct tvmk_cm_mve_pw_ch *ch = (struct tvmk_cm_mve_pw_ch *)p->scratch;
    struct tvmk_cm_mve_pw d;

    /* as the hook decides (tvmdev_cm_mve.wide): where conv1x1_s8_mve.c runs fewer */
    if (C > 16 || (C == 16 && p->M > 16) || p->stride_h != 1 || p->stride_w != 1) {
        return tvmk_cm_conv1x1_s8_mve(X, W, B, Y, p); /* conv1x1_s8_mve.c */
    }
    if (p->KH != 1 || p->KW != 1 || p->stride_h != 1 || p->stride_w != 1 ||
        p->pad_top != 0 || p->pad_left != 0 || p->group != 1 || C > 16 || C < 1 ||
        p->OH != p->H || p->OW != p->W || pixels < 4 || ((uintptr_t)p->scratch & 3) != 0 ||
        (int64_t)p->M * (int64_t)sizeof *ch > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    /* Each output channel's bias folded with input_offset times the sum of its weights,
     * and its requantization's multiplier and shifts. */
    for (int32_t m = 0; m < p->M; m++) {
        const int32_t sum = vaddvq_p_s8(vldrbq_z_s8(W + m * C, in), in);
        const int32_t shift = p->output_shift[m];
        ch[m].bias = (int32_t)((B != NULL ? (uint32_t)B[m] : 0u) +
                               (uint32_t)p->input_offset * (uint32_t)sum);
        ch[m].multiplier = p->output_multiplier[m];
        ch[m].left = shift > 0 ? shift : 0;
        ch[m].neg_right = shift > 0 ? 0 : shift;
        ch[m].rounds = shift < 0;
    }
    d.W = W;
    d.ch = ch;
    d.C = C;
    d.M = p->M;
    d.safe = p->M - (16 + C - 1) / C + 1; /* (m + 1) * C + 16 - C <= M * C */
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    for (int32_t i = 0; i + 4 <= pixels; i += 4) {
        tvmk_cm_mve_pw_quad(&d, X + i * C, Y + i * p->M, scatter, 0xFFFF);
    }
    if (pixels % 4 != 0) { /* the last one to three pixels: the last four, the first masked */
        const int32_t i = pixels - 4;
        tvmk_cm_mve_pw_quad(&d, X + i * C, Y + i * p->M, scatter,
                            (mve_pred16_t)(0xFFFFu << (4 * (4 - pixels % 4))));
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_conv2d_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
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
