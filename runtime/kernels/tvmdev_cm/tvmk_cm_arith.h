/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm's arithmetic, shared by its kernels: SMLAD and SMMULR (instructions of the DSP
 * extension, computed in C without it), two int16 values as one word, and TFLM's
 * requantization by SMMULR where the generator proved it exact (tvmk_cm.h).
 */
#ifndef TVMK_CM_ARITH_H_
#define TVMK_CM_ARITH_H_

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define TVMK_CM_SMLAD(x, y, acc) __smlad((x), (y), (acc))
#else
/* SMLAD in C: acc + x.lo * y.lo + x.hi * y.hi, wrapping as the instruction does. */
static inline int32_t tvmk_cm_smlad(int32_t x, int32_t y, int32_t acc)
{
    const int32_t lo = (int32_t)(int16_t)(x & 0xFFFF) * (int32_t)(int16_t)(y & 0xFFFF);
    const int32_t hi = (x >> 16) * (y >> 16);
    return (int32_t)((uint32_t)acc + (uint32_t)lo + (uint32_t)hi);
}
#define TVMK_CM_SMLAD(x, y, acc) tvmk_cm_smlad((x), (y), (acc))
#endif

/* The high word of a * b rounded (SMMULR): (a * b + 2^31) >> 32. */
static inline int32_t tvmk_cm_smmulr(int32_t a, int32_t b)
{
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (int32_t)(((int64_t)a * b + (INT64_C(1) << 31)) >> 32);
#endif
}

/* Two adjacent int16 values as one word (an unaligned load where the core allows it). */
static inline int32_t tvmk_cm_pair(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* One output channel's requantization. */
struct tvmk_cm_requant {
    int32_t multiplier;
    int32_t left;  /* the multiplier's left shift, plus one (SMMULR's doubling) */
    int32_t right; /* its right shift */
    int32_t round; /* 2^(right - 1), 0 when right is 0 */
    int32_t below; /* -1 when right > 0 (a negative value rounds down once more), else 0 */
    int32_t output_offset, activation_min, activation_max;
};

static inline void tvmk_cm_requant_init(struct tvmk_cm_requant *q, int32_t multiplier,
                                        int32_t shift, int32_t output_offset,
                                        int32_t activation_min, int32_t activation_max)
{
    q->multiplier = multiplier;
    q->left = (shift > 0 ? shift : 0) + 1;
    q->right = shift > 0 ? 0 : -shift;
    q->round = q->right > 0 ? (int32_t)1 << (q->right - 1) : 0;
    q->below = q->right > 0 ? -1 : 0;
    q->output_offset = output_offset;
    q->activation_min = activation_min;
    q->activation_max = activation_max;
}

/* TFLM's MultiplyByQuantizedMultiplier in fewer instructions, exact where the generator
 * proved |acc| * 2^(left shift + 1) < 2^31 for the layer (tvmdev/plan/hooks/tvmdev_cm.py):
 * the saturating rounding doubling high multiply of a and m is floor((a * m + 2^30) /
 * 2^31), SMMULR of 2a and m; the rounding division by 2^right, ties away from zero, is
 * (x + 2^(right - 1) - (x < 0)) >> right. Then the offset and the activation's clamp. */
static inline int8_t tvmk_cm_requantize(int32_t acc, const struct tvmk_cm_requant *q)
{
    const int32_t x = tvmk_cm_smmulr((int32_t)((uint32_t)acc << q->left), q->multiplier);
    int32_t v = ((x + q->round + ((x >> 31) & q->below)) >> q->right) + q->output_offset;
    v = v < q->activation_min ? q->activation_min : v;
    v = v > q->activation_max ? q->activation_max : v;
    return (int8_t)v;
}

#endif /* TVMK_CM_ARITH_H_ */
