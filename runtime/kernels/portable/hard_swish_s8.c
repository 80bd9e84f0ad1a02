/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 HARD_SWISH, TFLM's reference HardSwish in int16 fixed
 * point (tvmk_s8_ops.h: tvmk_hard_swish_s8_params). Every intermediate is an int16 value
 * held in an int32_t. Y may alias X (computed in place).
 */
#include <stddef.h>

#include "tvmk_s8_ops.h"

#define TVMK_I16_MIN (-32768)
#define TVMK_I16_MAX 32767

/* The high half of 2 * a * b for int16 values, rounded to nearest (gemmlowp's
 * SaturatingRoundingDoublingHighMul) or truncated (TFLite's SaturatingDoublingHighMul);
 * -2^15 * -2^15 saturates. */
static int32_t tvmk_hs_high_mul(int32_t a, int32_t b, int rounding)
{
    int32_t ab;

    if (a == b && a == TVMK_I16_MIN) {
        return TVMK_I16_MAX;
    }
    ab = a * b;
    if (rounding) {
        ab += ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    }
    return ab / (1 << 15);
}

/* gemmlowp's RoundingDivideByPOT of an int16 value; the mask is an int16, all ones for an
 * exponent of 16 or more (as TFLM computes it). */
static int32_t tvmk_hs_rdbpot(int32_t x, int32_t exponent)
{
    const int32_t mask = exponent < 16 ? (int32_t)((1 << exponent) - 1) : -1;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + ((x & mask) > threshold ? 1 : 0);
}

/* x * 2^amount saturated to int16. */
static int32_t tvmk_hs_shl(int32_t x, int32_t amount)
{
    const int64_t r = (int64_t)x * ((int64_t)1 << amount);
    return r > TVMK_I16_MAX ? TVMK_I16_MAX : (r < TVMK_I16_MIN ? TVMK_I16_MIN : (int32_t)r);
}

int32_t tvmk_hard_swish_s8(const int8_t *X, int8_t *Y,
                           const struct tvmk_hard_swish_s8_params *params, void *resource_handle)
{
    const struct tvmk_hard_swish_s8_params *p = params;
    int32_t i, count, in_zp, out_zp, relu_mult, relu_exp, out_mult, out_exp;

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL || p->count < 0 || p->output_exponent > 0 ||
        p->output_exponent < -31 || p->reluish_exponent < -31 || p->reluish_exponent > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = p->count;
    in_zp = p->input_zero_point;
    out_zp = p->output_zero_point;
    relu_mult = p->reluish_multiplier;
    relu_exp = p->reluish_exponent;
    out_mult = p->output_multiplier;
    out_exp = p->output_exponent;
    for (i = 0; i < count; ++i) {
        const int32_t hires = ((int32_t)X[i] - in_zp) * 128;
        const int32_t scaled = tvmk_hs_high_mul(hires, out_mult, 1);
        int32_t relu = hires;
        int32_t out;
        if (relu_exp > 0) {
            relu = tvmk_hs_shl(relu, relu_exp - 1);
        }
        relu = tvmk_hs_high_mul(relu, relu_mult, 1);
        if (relu_exp > 0) {
            relu = tvmk_hs_shl(relu, 1);
        } else if (relu_exp < 0) {
            relu = tvmk_hs_rdbpot(relu, -relu_exp);
        }
        relu = (relu + (1 << 15)) >> 1; /* from [-1, 1] to [0, 1] */
        out = tvmk_hs_rdbpot(tvmk_hs_high_mul(relu, scaled, 0), -out_exp);
        /* TFLM adds the zero point in int16, which wraps. */
        out = (int32_t)(((uint32_t)(out + out_zp + 32768)) & 0xFFFFU) - 32768;
        Y[i] = (int8_t)(out > 127 ? 127 : (out < -128 ? -128 : out));
    }
    return TVM_DEVICE_OK;
}
