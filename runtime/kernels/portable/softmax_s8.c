/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 SOFTMAX over the last axis, TFLM's algorithm
 * (tvmk_s8_ops.h: tvmk_softmax_s8_params). Three passes over each row, no scratch: its
 * maximum; the sum of exp(beta * scale * (x - max)) in Q12.19 (gemmlowp's
 * exp_on_negative_values of the difference rescaled into Q5.26); each output as that exp
 * times the sum's reciprocal, in 1/256 steps from -128. A row whose sum of exps reaches
 * 512 is an error (TFLM aborts on it).
 */
#include <stddef.h>

#include "tvmk_fixedpoint_math.h"
#include "tvmk_s8_ops.h"

#define TVMK_SOFTMAX_DIFF_BITS 5
#define TVMK_SOFTMAX_ACCUM_BITS 12

/* exp of (x - max) * beta * scale in Q0.31, for a difference at least diff_min. */
static int32_t tvmk_softmax_s8_exp(int32_t diff, const struct tvmk_softmax_s8_params *p)
{
    const int32_t rescaled = tvmk_srdhm((int32_t)((uint32_t)diff << p->input_left_shift),
                                        p->input_multiplier);
    return tvmk_fp_exp_on_negative_values(rescaled, TVMK_SOFTMAX_DIFF_BITS);
}

int32_t tvmk_softmax_s8(const int8_t *input, int8_t *output,
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
        int8_t *y = output + (size_t)o * (size_t)p->depth;
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
                sum = tvmk_fp_add(sum, tvmk_rounding_divide_by_pot(tvmk_softmax_s8_exp(diff, p),
                                                                   TVMK_SOFTMAX_ACCUM_BITS));
            }
        }
        scale = tvmk_fp_reciprocal(sum, TVMK_SOFTMAX_ACCUM_BITS, &bits_over_unit);
        exponent = bits_over_unit + 31 - 8;
        if (exponent < 0 || exponent > 31) {
            return TVM_DEVICE_ERR_INVALID;
        }
        for (c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - max;
            int32_t v = -128;
            if (diff >= p->diff_min) {
                v = tvmk_rounding_divide_by_pot(tvmk_srdhm(scale, tvmk_softmax_s8_exp(diff, p)),
                                                exponent) - 128;
                v = v > 127 ? 127 : (v < -128 ? -128 : v);
            }
            y[c] = (int8_t)v;
        }
    }
    return TVM_DEVICE_OK;
}
