/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: SOFTMAX of int8 into int16 over the last axis, TFLM's
 * reference_ops::Softmax with an int16 output (tvmk_softmax_s16_params): the int8
 * kernel's body (activation_int.h), each output in 1/65536 steps from -32768. SOFTMAX of
 * int16, TFLM's SoftmaxInt16 from the two tables (below).
 */
#include <stddef.h>

#include "activation_int.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

TVMK_SOFTMAX_FROM_S8(tvmk_softmax_s8_s16, int16_t, struct tvmk_softmax_s16_params, 16)

/* TFLite's LUTLookup of an int16: the segment's entry plus its slope times the low 7
 * bits, rounded; the sum wraps to int16 as TFLite's cast. */
static int16_t lut_lookup(int16_t value, const int16_t *lut)
{
    const int32_t index = 256 + (value >> 7);
    const int32_t offset = value & 0x7f;
    const int32_t base = lut[index];
    const int32_t slope = lut[index + 1] - base;
    return (int16_t)(uint16_t)(uint32_t)(base + ((slope * offset + 64) >> 7));
}

static int16_t saturate16(int32_t v)
{
    return (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

/* The number of leading zero bits of a nonzero 32-bit value. */
static int leading_zeros(uint32_t v)
{
    int n = 0;
    while ((v & 0x80000000u) == 0u) {
        v <<= 1;
        ++n;
    }
    return n;
}

int32_t tvmk_softmax_s16(const int16_t *input, int16_t *output,
                         const struct tvmk_softmax_s16_params *params, void *resource_handle)
{
    const struct tvmk_softmax_s16_params *p = params;
    int32_t o, c;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->exp_lut == NULL ||
        p->one_over_one_plus_x_lut == NULL || p->outer < 0 || p->depth < 1 ||
        p->input_left_shift < -31 || p->input_left_shift > 30) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (o = 0; o < p->outer; ++o) {
        const int16_t *x = input + (size_t)o * (size_t)p->depth;
        int16_t *y = output + (size_t)o * (size_t)p->depth;
        int32_t max = -32768;
        int32_t sum = 0;
        int32_t shifted;
        int16_t recip;
        int headroom, right;

        for (c = 0; c < p->depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        for (c = 0; c < p->depth; ++c) {
            const int32_t scaled = tvmk_multiply_by_quantized_multiplier(
                x[c] - max, p->input_multiplier, (int)p->input_left_shift);
            y[c] = lut_lookup(saturate16(scaled + 32767), p->exp_lut);
            sum += y[c];
        }
        if (sum <= 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
        headroom = leading_zeros((uint32_t)sum);
        shifted = (int32_t)((((int64_t)sum << (headroom - 1)) + (1 << 13)) >> 14);
        recip = lut_lookup(saturate16(shifted - ((1 << 15) + (1 << 16))),
                           p->one_over_one_plus_x_lut);
        right = 31 - headroom;
        for (c = 0; c < p->depth; ++c) {
            const int32_t v = (int32_t)(((int64_t)y[c] * recip + ((int64_t)1 << (right - 1))) >>
                                        right);
            y[c] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
        }
    }
    return TVM_DEVICE_OK;
}
