/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: TFLM's int16 sigmoid and tanh, interpolating its 256-entry
 * table of sigmoid(i / 24) in Q0.16 (sigmoid_table_uint16, read from TFLM's or CMSIS-NN's
 * tree at generation time and passed in the params). The int8 LSTM's gates (lstm_s8.c)
 * and the int16 LOGISTIC and TANH (sigmoid_s16.c) share them. Private to this folder.
 */
#ifndef TVMK_PORTABLE_SIGMOID_LUT_H_
#define TVMK_PORTABLE_SIGMOID_LUT_H_

#include <stdint.h>

/* The input rescaled for the table, 2^-12 / 3 a step: (x * multiplier + round) >> shift,
 * round half of 1 << shift. The right shift of a negative value is arithmetic on every
 * compiler tvmdev supports (GCC and Clang define it so), as TFLM's kernels assume. */
static inline int32_t tvmk_lut_scaled(int32_t x, int32_t multiplier, int32_t shift)
{
    return shift == 0 ? x * multiplier : (x * multiplier + (1 << (shift - 1))) >> shift;
}

/* TFLM's int16 logistic of v (tvmk_lut_scaled's) into Q0.15: 9 fractional bits into the
 * table. */
static inline int16_t tvmk_lut_sigmoid16(const uint16_t *table, int32_t v)
{
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 9;
    uint32_t r;

    if (uh >= 255U) {
        r = 0x7FFFU << 10;
    } else {
        r = ((uint32_t)table[uh] << 9) + (a & 0x1FFU) * ((uint32_t)table[uh + 1] - table[uh]);
    }
    r = v >= 0 ? r + (1U << 9) : (1U << 25) - r + (1U << 9) - 1U;
    return (int16_t)(r >> 10);
}

/* TFLM's int16 tanh of v (tvmk_lut_scaled's) into Q0.15: 2 sigmoid(2v) - 1, the
 * doubling one fractional bit fewer (8) into the table. */
static inline int16_t tvmk_lut_tanh16(const uint16_t *table, int32_t v)
{
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 8;
    int32_t r;

    if (uh >= 255U) {
        r = 0xFFFF << 8;
    } else {
        r = (int32_t)(((uint32_t)table[uh] << 8)
                      + (a & 0xFFU) * ((uint32_t)table[uh + 1] - table[uh]));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(r >> 8);
}

#endif /* TVMK_PORTABLE_SIGMOID_LUT_H_ */
