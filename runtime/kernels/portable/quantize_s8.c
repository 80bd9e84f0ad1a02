/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: QUANTIZE (float32 -> int8) as TFLM's AffineQuantize,
 * QUANTIZE of int8 (a requantization) as TFLM's Requantize,
 * DEQUANTIZE (int8 -> float32) as TFLM's Dequantize, and RESHAPE of int8 data (a copy,
 * skipped in place). Elementwise: the output may alias the input only for reshape.
 */
#include <math.h>
#include <stddef.h>
#if defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#endif
#include <string.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

/* The loops read the params into locals first: a store through an int8_t pointer may
 * alias anything, so the compiler would otherwise reload them for every element. */

/* One float to int8: round(x / scale) + zero_point, clamped to [-128, 127]; NaN gives
 * -128; a float beyond int32 is never converted. lo and hi: -128 and 127 less the zero
 * point, as floats. */
static inline int8_t quantize_one(float x, float scale, int32_t zero_point, float lo, float hi)
{
    const float r = roundf(x / scale);
#if defined(__arm__) && defined(__ARM_FP) && __ARM_ARCH >= 8
    /* Armv8's FPU: clamped as floats by VMAXNM and VMINNM (fmaxf(NaN, lo) is lo). */
    return (int8_t)((int32_t)fminf(fmaxf(r, lo), hi) + zero_point);
#elif defined(__ARM_FEATURE_SAT)
    /* Converted where int32 surely holds it (one test, which NaN fails), then saturated
     * by SSAT. */
    (void)lo;
    (void)hi;
    return (int8_t)(fabsf(r) < 1073741824.0f ? __ssat((int32_t)r + zero_point, 8)
                                             : (r > 0.0f ? 127 : -128));
#else
    if (!(r > lo)) { /* NaN too */
        return -128;
    }
    return r >= hi ? 127 : (int8_t)((int32_t)r + zero_point);
#endif
}

int32_t tvmk_quantize_s8(const float *input, int8_t *output,
                         const struct tvmk_quantize_s8_params *params, void *resource_handle)
{
    int32_t i, count, zero_point;
    float scale, lo, hi;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0 ||
        !(params->scale > 0.0f)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    scale = params->scale;
    zero_point = params->zero_point;
    lo = (float)(-128 - zero_point);
    hi = (float)(127 - zero_point);
    for (i = 0; i < count; ++i) {
        output[i] = quantize_one(input[i], scale, zero_point, lo, hi);
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_requantize_s8(const int8_t *input, int8_t *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle)
{
    int32_t i, count, input_zero_point, multiplier, zero_point;
    int shift;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0 ||
        params->shift > 30 || params->shift < -31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    input_zero_point = params->input_zero_point;
    multiplier = params->multiplier;
    shift = (int)params->shift;
    zero_point = params->zero_point;
    for (i = 0; i < count; ++i) {
        int32_t q = tvmk_multiply_by_quantized_multiplier(
                        (int32_t)input[i] - input_zero_point, multiplier, shift) + zero_point;
        q = q < -128 ? -128 : q;
        output[i] = (int8_t)(q > 127 ? 127 : q);
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_dequantize_s8(const int8_t *input, float *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle)
{
    int32_t i, count, zero_point;
    float scale;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    zero_point = params->zero_point;
    scale = params->scale;
    for (i = 0; i < count; ++i) {
        output[i] = (float)((int32_t)input[i] - zero_point) * scale;
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_reshape_s8(const int8_t *data, int8_t *reshaped,
                        const struct tvmk_unary_params *params, void *resource_handle)
{
    (void)resource_handle;
    if (data == NULL || reshaped == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (reshaped != data && params->count > 0) {
        memmove(reshaped, data, (size_t)params->count);
    }
    return TVM_DEVICE_OK;
}
