/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TFLite's integer requantisation for the int8 kernels: gemmlowp's saturating rounding
 * doubling high multiply and rounding right shift, and TFLite's
 * MultiplyByQuantizedMultiplier (double rounding, TFLite's default and what TFLM's
 * reference kernels compute). The multiplier and shift of each real scale ratio are
 * derived at generation time (tvmdev/model/fixedpoint.py: quantize_multiplier); the numpy
 * reference computes the same steps independently (the same module).
 */
#ifndef TVMK_FIXEDPOINT_H_
#define TVMK_FIXEDPOINT_H_

#include <stdint.h>

/* The high 32 bits of 2 * a * b, rounded to nearest with ties up (gemmlowp's nudge, then
 * a truncating division: 1.5 -> 2, -1.5 -> -1); the one overflowing case,
 * INT32_MIN * INT32_MIN, saturates to INT32_MAX. */
static inline int32_t tvmk_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (INT64_C(1) - (INT64_C(1) << 30));
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* x / 2^exponent, rounded to nearest with ties away from zero; exponent in [0, 31]. The
 * right shift of a negative value is arithmetic on every compiler tvmdev supports (GCC
 * and Clang define it so). */
static inline int32_t tvmk_rounding_divide_by_pot(int32_t x, int exponent) {
    int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^(shift - 31), as TFLite's MultiplyByQuantizedMultiplier: shift in
 * [-31, 30]; x * 2^shift must fit int32 (true for every requantisation TFLite defines). */
static inline int32_t tvmk_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                            int shift) {
    int left = shift > 0 ? shift : 0;
    int right = shift > 0 ? 0 : -shift;
    return tvmk_rounding_divide_by_pot(
        tvmk_srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}

/* x * multiplier * 2^(shift - 31) of an int64 accumulator, as TFLite's int64
 * MultiplyByQuantizedMultiplier (the 16x8 kernels' with int64 bias): the multiplier
 * rounded to 16 bits, then (x * m16 + 2^(14 - shift)) >> (15 - shift); shift in [-31, 7],
 * |x| < 2^47 (TFLite's assumptions), the result truncated to int32 as TFLite does. */
static inline int32_t tvmk_multiply_by_quantized_multiplier_64(int64_t x, int32_t multiplier,
                                                               int shift) {
    const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int total = 15 - shift;
    return (int32_t)((x * (int64_t)reduced + (INT64_C(1) << (total - 1))) >> total);
}

#endif /* TVMK_FIXEDPOINT_H_ */
