/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: ADD int8 of two operands of the output's shape on a
 * Cortex-M55, four elements a vector (tvmk_cm.h). TFLM's arithmetic exactly (its
 * reference AddElementwise, as the portable kernel's binary_int.h): each operand plus
 * its offset, shifted left by left_shift (VMLAS: x * 2^left_shift + offset *
 * 2^left_shift, exact: |x + offset| <= 255 and left_shift <= 20), scaled by
 * MultiplyByQuantizedMultiplier, the two summed, the sum scaled by it again, plus the
 * output offset, clamped. MultiplyByQuantizedMultiplier with a shift of 0 or less
 * (TFLM's ADD has no other: its scales are at most 1/2) is VQRDMULH, then the rounding
 * division by 2^right with ties away from zero: one less for a negative value where
 * right > 0, saturating, then VRSHL's rounding shift, which rounds ties up. Elementwise
 * in order: the output may be either input.
 *
 * A broadcast, a positive shift, or a core without MVE, was declined at generation time
 * (tvmdev/plan/hooks/tvmdev_cm_mvedw.py): this entry returns TVM_DEVICE_ERR_INVALID.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

/* TFLM's MultiplyByQuantizedMultiplier of four values by a multiplier and a shift of 0
 * or less (the hooks declined others: TFLM's ADD has none), -right_shift = neg_right;
 * rounds: 1 where right_shift > 0. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_add_mbqm(int32x4_t v, int32_t multiplier, int32_t neg_right, int32_t rounds)
{
    const int32x4_t x = vqrdmulhq_n_s32(v, multiplier);
    return vrshlq_n_s32(vqaddq_s32(x, vmulq_n_s32(vshrq_n_s32(x, 31), rounds)), neg_right);
}

/* The operation's constants, in locals: the stores through C cannot change them. */
struct tvmk_cm_add {
    int32_t a0, b0; /* the offsets shifted left */
    int32_t am, an, ar, bm, bn, br, om, on, orr; /* multipliers, shifts, rounds */
    int32_t out_offset;
};

/* Four outputs of the raw inputs a and b. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_add_four(int32x4_t a, int32x4_t b, const struct tvmk_cm_add k, int32x4_t scale,
                 int32x4_t lo, int32x4_t hi)
{
    int32x4_t y =
        vaddq_s32(tvmk_cm_add_mbqm(vmlasq_n_s32(a, scale, k.a0), k.am, k.an, k.ar),
                  tvmk_cm_add_mbqm(vmlasq_n_s32(b, scale, k.b0), k.bm, k.bn, k.br));
    y = tvmk_cm_add_mbqm(y, k.om, k.on, k.orr);
    return vminq_s32(vmaxq_s32(vaddq_n_s32(y, k.out_offset), lo), hi);
}

int32_t tvmk_cm_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                       const struct tvmk_add_s8_params *p, void *resource_handle)
{
    const struct tvmk_cm_add k = {
        (int32_t)((uint32_t)p->a_offset << (p->left_shift & 31)),
        (int32_t)((uint32_t)p->b_offset << (p->left_shift & 31)),
        p->a_multiplier, p->a_shift, p->a_shift < 0,
        p->b_multiplier, p->b_shift, p->b_shift < 0,
        p->out_multiplier, p->out_shift, p->out_shift < 0, p->out_offset};
    const int32x4_t scale = vdupq_n_s32(1 << (p->left_shift & 31));
    const int32x4_t lo = vdupq_n_s32(p->act_min);
    const int32x4_t hi = vdupq_n_s32(p->act_max);
    int32_t n = p->count;
    (void)resource_handle;

    if (A == NULL || B == NULL || C == NULL || n < 0 || p->left_shift < 0 ||
        p->left_shift > 20 || p->a_shift > 0 || p->b_shift > 0 || p->out_shift > 0) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    for (; n >= 4; n -= 4, A += 4, B += 4, C += 4) {
        vstrbq_s32(C, tvmk_cm_add_four(vldrbq_s32(A), vldrbq_s32(B), k, scale, lo, hi));
    }
    if (n > 0) {
        const mve_pred16_t pred = vctp32q((uint32_t)n);
        vstrbq_p_s32(C, tvmk_cm_add_four(vldrbq_z_s32(A, pred), vldrbq_z_s32(B, pred), k,
                                          scale, lo, hi), pred);
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                       const struct tvmk_add_s8_params *p, void *resource_handle)
{
    (void)A;
    (void)B;
    (void)C;
    (void)p;
    (void)resource_handle;
    return TVM_DEVICE_ERR_INVALID; /* no MVE: the hooks declined this path */
}

#endif
