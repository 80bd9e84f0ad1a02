/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: SOFTMAX of int8 into int16 over the last axis, TFLM's
 * reference_ops::Softmax with an int16 output (tvmk_softmax_s8_params): the int8
 * algorithm, each output in 1/65536 steps from -32768.
 */
#include <stddef.h>

#include "tvmk_fixedpoint_math.h"
#include "tvmk_s16.h"

#define DIFF_BITS 5
#define ACCUM_BITS 12

/* exp of (x - max) * beta * scale in Q0.31, for a difference at least diff_min. */
static int32_t exp_of(int32_t diff, const struct tvmk_softmax_s8_params *p)
{
    const int32_t rescaled = tvmk_srdhm((int32_t)((uint32_t)diff << p->input_left_shift),
                                        p->input_multiplier);
    return tvmk_fp_exp_on_negative_values(rescaled, DIFF_BITS);
}

int32_t tvmk_softmax_s8_s16(const int8_t *input, int16_t *output,
                            const struct tvmk_softmax_s8_params *params, void *resource_handle)
{
    const struct tvmk_softmax_s8_params *p = params;
    int32_t o, c;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->outer < 0 || p->depth < 1 ||
        p->input_left_shift < 0 || p->input_left_shift > 31 || p->diff_min > 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (o = 0; o < p->outer; ++o) {
        const int8_t *x = input + (size_t)o * (size_t)p->depth;
        int16_t *y = output + (size_t)o * (size_t)p->depth;
        int32_t max = -128;
        int32_t sum = 0;
        int32_t scale;
        int bits_over_unit, exponent;

        for (c = 0; c < p->depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        for (c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - max;
            if (diff >= p->diff_min) {
                sum = tvmk_fp_add(sum, tvmk_rounding_divide_by_pot(exp_of(diff, p), ACCUM_BITS));
            }
        }
        scale = tvmk_fp_reciprocal(sum, ACCUM_BITS, &bits_over_unit);
        exponent = bits_over_unit + 31 - 16;
        if (exponent < 0 || exponent > 31) {
            return TVM_DEVICE_ERR_INVALID;
        }
        for (c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - max;
            int32_t v = -32768;
            if (diff >= p->diff_min) {
                v = tvmk_rounding_divide_by_pot(tvmk_srdhm(scale, exp_of(diff, p)), exponent) -
                    32768;
                v = v > 32767 ? 32767 : (v < -32768 ? -32768 : v);
            }
            y[c] = (int16_t)v;
        }
    }
    return TVM_DEVICE_OK;
}
