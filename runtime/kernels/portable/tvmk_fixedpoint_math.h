/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gemmlowp's fixed-point transcendental functions for the int8 softmax, log-softmax,
 * logistic and tanh kernels, as TFLite calls them: exp of a non-positive value,
 * 1 / (1 + x), (1 - x) / (1 + x), logistic, tanh, and TFLite's GetReciprocal and
 * log_x_for_x_greater_than_or_equal_to_1. A value is an int32 raw
 * value in Q(ib).(31 - ib), the integer bits ib being part of each function; a product
 * of two values is tvmk_srdhm of their raw values; sums wrap as int32 (through uint32,
 * so no signed overflow is undefined); Rescale is a saturating left shift or a rounding
 * right shift. The numpy twin is tvmdev/model/s8/gemmlowp.py. Private to this folder.
 */
#ifndef TVMK_FIXEDPOINT_MATH_H_
#define TVMK_FIXEDPOINT_MATH_H_

#include <stdint.h>

#include "tvmk_fixedpoint.h"

/* a + b and a - b wrapping as two's complement int32. */
static inline int32_t tvmk_fp_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t tvmk_fp_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* x * 2^exponent saturated to int32 (exponent in [1, 30]). */
static inline int32_t tvmk_fp_sat_shl(int32_t x, int exponent)
{
    const int32_t threshold = (int32_t)((INT32_C(1) << (31 - exponent)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/* (a + b) / 2 rounded half away from zero (gemmlowp's RoundingHalfSum). */
static inline int32_t tvmk_fp_rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + (int64_t)b;
    return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static inline int32_t tvmk_fp_exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668;  /* exp(-1/8) */
    const int32_t one_third = 715827883;
    const int32_t x = tvmk_fp_add(a, INT32_C(1) << 28);
    const int32_t x2 = tvmk_srdhm(x, x);
    const int32_t x3 = tvmk_srdhm(x2, x);
    const int32_t x4 = tvmk_srdhm(x2, x2);
    const int32_t x4_over_4 = tvmk_rounding_divide_by_pot(x4, 2);
    const int32_t poly = tvmk_rounding_divide_by_pot(
        tvmk_fp_add(tvmk_srdhm(tvmk_fp_add(x4_over_4, x3), one_third), x2), 1);
    return tvmk_fp_add(constant_term, tvmk_srdhm(constant_term, tvmk_fp_add(x, poly)));
}

/* exp(a) in Q0.31 for a <= 0 in Q(integer_bits).(31 - integer_bits), integer_bits in
 * [1, 5] (TFLite uses 4 and 5; gemmlowp's clamp below -32 applies only above 5). */
static inline int32_t tvmk_fp_exp_on_negative_values(int32_t a, int integer_bits)
{
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                      39332535, 720401, 242};  /* exp(-2^e), e = -2..4 */
    const int frac = 31 - integer_bits;
    const int32_t quarter = INT32_C(1) << (frac - 2);
    const int32_t a_mod = tvmk_fp_sub((int32_t)((uint32_t)a & (uint32_t)(quarter - 1)), quarter);
    const int32_t remainder = tvmk_fp_sub(a_mod, a);
    int32_t result = tvmk_fp_exp_quarter(tvmk_fp_sat_shl(a_mod, integer_bits));
    int e;

    for (e = -2; e <= 4; ++e) {
        if (integer_bits > e && ((uint32_t)remainder & (UINT32_C(1) << (frac + e))) != 0U) {
            result = tvmk_srdhm(result, barrel[e + 2]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/* 1 / half_denominator in Q2.29 (Newton-Raphson: 48/17 - 32/17 d, then three steps). */
static inline int32_t tvmk_fp_newton_reciprocal(int32_t half_denominator)
{
    const int32_t one = INT32_C(1) << 29;
    int32_t x = tvmk_fp_add(1515870810, tvmk_srdhm(half_denominator, -1010580540));
    int i;

    for (i = 0; i < 3; ++i) {
        const int32_t one_minus = tvmk_fp_sub(one, tvmk_srdhm(half_denominator, x));
        x = tvmk_fp_add(x, tvmk_fp_sat_shl(tvmk_srdhm(x, one_minus), 2));
    }
    return x;
}

/* 1 / (1 + a) in Q0.31 for a in [0, 1) in Q0.31. */
static inline int32_t tvmk_fp_one_over_one_plus_x(int32_t a)
{
    const int32_t half = tvmk_fp_rounding_half_sum(a, INT32_MAX);
    return tvmk_fp_sat_shl(tvmk_fp_newton_reciprocal(half), 1);
}

/* (1 - a) / (1 + a) in Q0.31 for a in [0, 1) in Q0.31. */
static inline int32_t tvmk_fp_one_minus_x_over_one_plus_x(int32_t a)
{
    const int32_t half = tvmk_fp_rounding_half_sum(a, INT32_MAX);
    return tvmk_fp_sat_shl(tvmk_fp_sub(tvmk_fp_newton_reciprocal(half), INT32_C(1) << 29), 2);
}

/* 1 / (1 + exp(-a)) in Q0.31 for a in Q(integer_bits). */
static inline int32_t tvmk_fp_logistic(int32_t a, int integer_bits)
{
    int32_t magnitude, if_positive;

    if (a == 0) {
        return INT32_C(1) << 30;
    }
    magnitude = a > 0 ? a : tvmk_fp_sub(0, a);
    if_positive = tvmk_fp_one_over_one_plus_x(
        tvmk_fp_exp_on_negative_values(tvmk_fp_sub(0, magnitude), integer_bits));
    return a > 0 ? if_positive : tvmk_fp_sub(INT32_MAX, if_positive);
}

/* tanh(a) in Q0.31 for a in Q(integer_bits) (integer_bits <= 4: exp takes -2|a|, the
 * same raw value read with one more integer bit). */
static inline int32_t tvmk_fp_tanh(int32_t a, int integer_bits)
{
    int32_t n, t;

    if (a == 0) {
        return 0;
    }
    n = a < 0 ? a : tvmk_fp_sub(0, a);
    t = tvmk_fp_one_minus_x_over_one_plus_x(
        tvmk_fp_exp_on_negative_values(n, integer_bits + 1));
    return a < 0 ? tvmk_fp_sub(0, t) : t;
}

/* The number of leading zero bits of x (32 for 0). */
static inline int tvmk_fp_clz32(uint32_t x)
{
    int n = 0;

    if (x == 0U) {
        return 32;
    }
    while ((x & UINT32_C(0x80000000)) == 0U) {
        x <<= 1;
        ++n;
    }
    return n;
}

/* TFLite's GetReciprocal: 1 / x in Q0.31 for x > 0 in Q(integer_bits), scaled up by
 * 2^*bits_over_unit. */
static inline int32_t tvmk_fp_reciprocal(int32_t x, int integer_bits, int *bits_over_unit)
{
    const int headroom = tvmk_fp_clz32((uint32_t)x);
    const uint32_t shifted = headroom < 32 ? ((uint32_t)x << headroom) : 0U;

    *bits_over_unit = integer_bits - headroom;
    return tvmk_fp_one_over_one_plus_x((int32_t)(shifted - UINT32_C(0x80000000)));
}

/* x * 2^exponent saturated to int32, exponent in [0, 31] (TFLite's
 * SaturatingRoundingMultiplyByPOTParam). */
static inline int32_t tvmk_fp_sat_shl_param(int32_t x, int exponent)
{
    return exponent == 0 ? x : tvmk_fp_sat_shl(x, exponent);
}

/* a + b saturated to int32. */
static inline int32_t tvmk_fp_sat_add(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + (int64_t)b;
    return sum > INT32_MAX ? INT32_MAX : (sum < INT32_MIN ? INT32_MIN : (int32_t)sum);
}

/* log(2), sqrt(sqrt(1/2)) and sqrt(1/2) in Q0.31, and the constants of the rational
 * approximation of log(r) for r in [sqrt(1/2), 1] (TFLite's). */
#define TVMK_FP_LOG_2 INT32_C(1488522236)
#define TVMK_FP_SQRT_SQRT_HALF INT32_C(1805811301)
#define TVMK_FP_SQRT_HALF INT32_C(1518500250)
#define TVMK_FP_LOG_ALPHA_N INT32_C(117049297)
#define TVMK_FP_LOG_ALPHA_D INT32_C(127690142)
#define TVMK_FP_LOG_ALPHA_I INT32_C(1057819769)
#define TVMK_FP_LOG_ALPHA_F INT32_C(638450708)

/* log(a) for a >= 1 in Q(integer_bits), in Q(out_bits) (out_bits <= 29): a = 2^z * r,
 * r in [sqrt(1/2), 1] from the better of two normalizations, z * log(2) plus a rational
 * function of r, summed in Q(out_bits + 1). */
static inline int32_t tvmk_fp_log_x_ge_1(int32_t a, int integer_bits, int out_bits)
{
    const int acc = out_bits + 1;
    const int32_t quarter = tvmk_rounding_divide_by_pot(INT32_C(1) << 29, acc);
    const int head_a = tvmk_fp_clz32((uint32_t)a);
    const int head_b = tvmk_fp_clz32((uint32_t)tvmk_srdhm(a, TVMK_FP_SQRT_HALF)) - 1;
    const int32_t r_a = tvmk_fp_sat_shl(
        tvmk_srdhm(tvmk_fp_sat_shl_param(a, head_a - 1), TVMK_FP_SQRT_HALF), 1);
    const int32_t r_b = tvmk_fp_sat_shl_param(a, head_b);
    const int32_t z_a = tvmk_fp_sat_add(
        tvmk_fp_sat_shl_param(integer_bits - head_a, 31 - acc), quarter);
    const int32_t z_b = tvmk_fp_sat_add(
        tvmk_fp_sat_shl_param(integer_bits - head_b, 31 - acc), -quarter);
    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z = z_a > z_b ? z_a : z_b;
    const int32_t p = tvmk_fp_rounding_half_sum(r, TVMK_FP_SQRT_SQRT_HALF);
    const int32_t q = tvmk_fp_add(tvmk_fp_sub(r, TVMK_FP_SQRT_SQRT_HALF),
                                  tvmk_fp_sub(r, TVMK_FP_SQRT_SQRT_HALF));
    const int32_t sq = tvmk_srdhm(q, q);
    const int32_t num = tvmk_fp_add(tvmk_srdhm(q, r),
                                    tvmk_srdhm(tvmk_srdhm(q, sq), TVMK_FP_LOG_ALPHA_N));
    const int32_t denom = tvmk_fp_add(
        tvmk_srdhm(p, tvmk_fp_add(tvmk_fp_add(TVMK_FP_LOG_ALPHA_I, q),
                                  tvmk_srdhm(TVMK_FP_LOG_ALPHA_D, sq))),
        tvmk_srdhm(TVMK_FP_LOG_ALPHA_F, q));
    const int32_t total = tvmk_fp_add(
        tvmk_srdhm(z, TVMK_FP_LOG_2),
        tvmk_srdhm(tvmk_rounding_divide_by_pot(num, acc), tvmk_fp_one_over_one_plus_x(denom)));
    return tvmk_fp_sat_shl_param(total, acc - out_bits);
}

#endif /* TVMK_FIXEDPOINT_MATH_H_ */
