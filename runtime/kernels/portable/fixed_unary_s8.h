/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the shared body of int8 LOGISTIC and TANH (sigmoid_s8.c,
 * tanh_s8.c), TFLM's algorithm: saturation outside the input radius, else the input
 * rescaled into Q4.27 through gemmlowp's fixed-point function and rounded to the output's
 * steps. Private to this folder; each element is written after it is read, so the output
 * may alias the input.
 */
#ifndef TVMK_PORTABLE_FIXED_UNARY_S8_H_
#define TVMK_PORTABLE_FIXED_UNARY_S8_H_

#include <stddef.h>

#include "tvmk_fixedpoint_math.h"
#include "tvmk_s8_ops.h"

#define TVMK_FIXED_UNARY_INPUT_BITS 4

/* Y = f(X) over count elements: f is logistic (is_tanh 0; output 1/256 steps from
 * -128) or tanh (is_tanh 1; 1/128 steps around 0). */
static inline int32_t tvmk_fixed_unary_s8(int is_tanh, const int8_t *X, int8_t *Y,
                                          int32_t count, int32_t zero_point, int32_t radius,
                                          int32_t multiplier, int32_t left_shift)
{
    const int out_shift = is_tanh ? 31 - 7 : 31 - 8;
    const int32_t offset = is_tanh ? 0 : -128;
    int32_t i;

    if (X == NULL || Y == NULL || count < 0 || radius < 0 || left_shift < 0 ||
        left_shift > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < count; ++i) {
        const int32_t v = (int32_t)X[i] - zero_point;
        int32_t out;
        if (v <= -radius) {
            out = -128;
        } else if (v >= radius) {
            out = 127;
        } else {
            const int32_t q4 = tvmk_multiply_by_quantized_multiplier(v, multiplier, left_shift);
            const int32_t q0 = is_tanh ? tvmk_fp_tanh(q4, TVMK_FIXED_UNARY_INPUT_BITS)
                                       : tvmk_fp_logistic(q4, TVMK_FIXED_UNARY_INPUT_BITS);
            out = tvmk_rounding_divide_by_pot(q0, out_shift) + offset;
            out = out > 127 ? 127 : (out < -128 ? -128 : out);
        }
        Y[i] = (int8_t)out;
    }
    return TVM_DEVICE_OK;
}

#endif /* TVMK_PORTABLE_FIXED_UNARY_S8_H_ */
