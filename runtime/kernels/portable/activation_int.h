/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the bodies the int8 and int16 activation kernels share,
 * LEAKY_RELU (leaky_relu_s8.c, simple_s16.c) and the SOFTMAX of int8 input into int8 or
 * int16 (softmax_s8.c, softmax_s16.c). Private to this folder; each macro defines one
 * kernel. (The SOFTMAX of int16 input is another algorithm, TFLM's table-driven
 * SoftmaxInt16: softmax_s16.c.)
 */
#ifndef TVMK_PORTABLE_ACTIVATION_INT_H_
#define TVMK_PORTABLE_ACTIVATION_INT_H_

#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_fixedpoint_math.h"
#include "tvmk_s8_ops.h"

/* LEAKY_RELU of T (range [lo, hi]), TFLM's QuantizeLeakyRelu
 * (tvmk_leaky_relu_s8_params). Y may alias X (computed in place). */
#define TVMK_LEAKY_RELU_INT(name, T, lo, hi)                                                 \
    int32_t name(const T *X, T *Y, const struct tvmk_leaky_relu_s8_params *params,           \
                 void *resource_handle)                                                      \
    {                                                                                        \
        const struct tvmk_leaky_relu_s8_params *p = params;                                  \
        int32_t i, count, in_zp, out_zp, alpha_mag, alpha_shift, id_mult, id_shift, negate;  \
                                                                                             \
        (void)resource_handle;                                                               \
        if (X == NULL || Y == NULL || p == NULL || p->count < 0 ||                           \
            p->alpha_multiplier == INT32_MIN || p->alpha_shift < -31 ||                      \
            p->alpha_shift > 30 || p->identity_shift < -31 || p->identity_shift > 30) {      \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        /* Locals: a store through a T pointer may alias the params. */                      \
        count = p->count;                                                                    \
        in_zp = p->input_zero_point;                                                         \
        out_zp = p->output_zero_point;                                                       \
        negate = p->alpha_multiplier < 0;                                                    \
        alpha_mag = negate ? -p->alpha_multiplier : p->alpha_multiplier;                     \
        alpha_shift = p->alpha_shift;                                                        \
        id_mult = p->identity_multiplier;                                                    \
        id_shift = p->identity_shift;                                                        \
        for (i = 0; i < count; ++i) {                                                        \
            const int32_t v = (int32_t)X[i] - in_zp;                                         \
            int32_t out;                                                                     \
            if (v >= 0) {                                                                    \
                out = out_zp + tvmk_multiply_by_quantized_multiplier(v, id_mult, id_shift);  \
            } else {                                                                         \
                const int32_t s =                                                            \
                    tvmk_multiply_by_quantized_multiplier(v, alpha_mag, alpha_shift);        \
                out = out_zp + (negate ? -s : s);                                            \
            }                                                                                \
            Y[i] = (T)(out > (hi) ? (hi) : (out < (lo) ? (lo) : out));                       \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#define TVMK_SOFTMAX_DIFF_BITS 5
#define TVMK_SOFTMAX_ACCUM_BITS 12

/* SOFTMAX of int8 into out_t (bits wide: 8 or 16) over the last axis, TFLM's algorithm;
 * params_t has tvmk_softmax_s8_params' fields. Three passes over each row, no scratch:
 * its maximum; the sum of exp(beta * scale * (x - max)) in Q12.19 (gemmlowp's
 * exp_on_negative_values of the difference rescaled into Q5.26); each output as that exp
 * times the sum's reciprocal, in 2^-bits steps from -2^(bits - 1). A row whose sum of
 * exps reaches 512 is an error (TFLM aborts on it). name##_exp: exp of
 * (x - max) * beta * scale in Q0.31, for a difference at least diff_min. */
#define TVMK_SOFTMAX_FROM_S8(name, out_t, params_t, bits)                                    \
    static int32_t name##_exp(int32_t diff, const params_t *p)                               \
    {                                                                                        \
        const int32_t rescaled = tvmk_srdhm((int32_t)((uint32_t)diff << p->input_left_shift),\
                                            p->input_multiplier);                            \
        return tvmk_fp_exp_on_negative_values(rescaled, TVMK_SOFTMAX_DIFF_BITS);             \
    }                                                                                        \
                                                                                             \
    int32_t name(const int8_t *input, out_t *output, const params_t *params,                 \
                 void *resource_handle)                                                      \
    {                                                                                        \
        const params_t *p = params;                                                          \
        const int32_t lo = -(INT32_C(1) << ((bits) - 1)), hi = -lo - 1;                      \
        int32_t o, c;                                                                        \
                                                                                             \
        (void)resource_handle;                                                               \
        if (input == NULL || output == NULL || p == NULL || p->outer < 0 || p->depth < 1 ||  \
            p->input_left_shift < 0 || p->input_left_shift > 31 || p->diff_min > 0) {        \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        for (o = 0; o < p->outer; ++o) {                                                     \
            const int8_t *x = input + (size_t)o * (size_t)p->depth;                          \
            out_t *y = output + (size_t)o * (size_t)p->depth;                                \
            int32_t max = -128;                                                              \
            int32_t sum = 0;                                                                 \
            int32_t scale;                                                                   \
            int bits_over_unit, exponent;                                                    \
                                                                                             \
            for (c = 0; c < p->depth; ++c) {                                                 \
                max = x[c] > max ? x[c] : max;                                               \
            }                                                                                \
            for (c = 0; c < p->depth; ++c) {                                                 \
                const int32_t diff = x[c] - max;                                             \
                if (diff >= p->diff_min) {                                                   \
                    sum = tvmk_fp_add(sum, tvmk_rounding_divide_by_pot(name##_exp(diff, p),  \
                                                                       TVMK_SOFTMAX_ACCUM_BITS)); \
                }                                                                            \
            }                                                                                \
            scale = tvmk_fp_reciprocal(sum, TVMK_SOFTMAX_ACCUM_BITS, &bits_over_unit);       \
            exponent = bits_over_unit + 31 - (bits);                                         \
            if (exponent < 0 || exponent > 31) {                                             \
                return TVM_DEVICE_ERR_INVALID;                                               \
            }                                                                                \
            for (c = 0; c < p->depth; ++c) {                                                 \
                const int32_t diff = x[c] - max;                                             \
                int32_t v = lo;                                                              \
                if (diff >= p->diff_min) {                                                   \
                    v = tvmk_rounding_divide_by_pot(tvmk_srdhm(scale, name##_exp(diff, p)),  \
                                                    exponent) + lo;                          \
                    v = v > hi ? hi : (v < lo ? lo : v);                                     \
                }                                                                            \
                y[c] = (out_t)v;                                                             \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#endif /* TVMK_PORTABLE_ACTIVATION_INT_H_ */
