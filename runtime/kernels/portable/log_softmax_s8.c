/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 LOG_SOFTMAX over the last axis, TFLM's algorithm
 * (tvmk_s8_ops.h: tvmk_log_softmax_s8_params). Three passes over each row, no scratch:
 * its maximum; the sum of exp(scale * (x - max)) in Q12.19 and its log in Q5.26; each
 * output as the scaled difference less that log, in 1/16 steps below 127. Output may
 * alias input (each element is read before it is overwritten at the same position).
 */
#include <stddef.h>

#include "tvmk_fixedpoint_math.h"
#include "tvmk_s8_ops.h"

#define TVMK_LOG_SOFTMAX_DIFF_BITS 5
#define TVMK_LOG_SOFTMAX_ACCUM_BITS 12
#define TVMK_LOG_SOFTMAX_OUT_BITS 4

int32_t tvmk_log_softmax_s8(const int8_t *input, int8_t *output,
                            const struct tvmk_log_softmax_s8_params *params,
                            void *resource_handle)
{
    const struct tvmk_log_softmax_s8_params *p = params;
    const int shift = 31 - TVMK_LOG_SOFTMAX_DIFF_BITS - TVMK_LOG_SOFTMAX_OUT_BITS;
    int32_t o, c;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->outer < 0 || p->depth < 1 ||
        p->input_left_shift < 0 || p->input_left_shift > 31 || p->diff_min > 0 ||
        p->reverse_scaling_right_shift < 0 || p->reverse_scaling_right_shift > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (o = 0; o < p->outer; ++o) {
        const int8_t *x = input + (size_t)o * (size_t)p->depth;
        int8_t *y = output + (size_t)o * (size_t)p->depth;
        int32_t max = -128, sum = 0, log_sum, limit;

        for (c = 0; c < p->depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        for (c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - max;
            if (diff >= p->diff_min) {
                const int32_t e = tvmk_fp_exp_on_negative_values(
                    tvmk_multiply_by_quantized_multiplier(diff, p->input_multiplier,
                                                          p->input_left_shift),
                    TVMK_LOG_SOFTMAX_DIFF_BITS);
                sum = tvmk_fp_add(sum, tvmk_rounding_divide_by_pot(e, TVMK_LOG_SOFTMAX_ACCUM_BITS));
            }
        }
        log_sum = tvmk_fp_log_x_ge_1(sum, TVMK_LOG_SOFTMAX_ACCUM_BITS, TVMK_LOG_SOFTMAX_DIFF_BITS);
        /* The differences above which the output's subtraction stays within Q5.26. */
        limit = tvmk_multiply_by_quantized_multiplier(tvmk_fp_add(log_sum, INT32_MIN),
                                                      p->reverse_scaling_divisor,
                                                      -p->reverse_scaling_right_shift);
        limit = limit > p->diff_min - 1 ? limit : p->diff_min - 1;
        for (c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - max;
            int32_t v = -128;
            if (diff > limit) {
                const int32_t scaled = tvmk_multiply_by_quantized_multiplier(
                    diff, p->input_multiplier, p->input_left_shift);
                v = tvmk_rounding_divide_by_pot(scaled - log_sum, shift) + 127;
                v = v > 127 ? 127 : (v < -128 ? -128 : v);
            }
            y[c] = (int8_t)v;
        }
    }
    return TVM_DEVICE_OK;
}
