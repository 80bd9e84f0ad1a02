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

#endif /* TVMK_FIXEDPOINT_H_ */
