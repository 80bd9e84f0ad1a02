/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the bodies of the int8 and int16 QUANTIZE, requantize and
 * DEQUANTIZE kernels (quantize_s8.c, quantize_s16.c), as TFLM's AffineQuantize,
 * Requantize and Dequantize. Private to this folder; each macro defines one kernel.
 *
 * The loops read the params into locals first: a store through an int8_t pointer may
 * alias anything, so the compiler would otherwise reload them for every element.
 *
 * Each loop reads input[i] and then writes output[i], in order: an output whose
 * elements are no larger than the input's may start at the input's address (the
 * kernels that say so in kernels.yaml: int8 outputs, which may alias any type, and
 * int16 to int16).
 */
#ifndef TVMK_PORTABLE_QUANTIZE_INT_H_
#define TVMK_PORTABLE_QUANTIZE_INT_H_

#include <math.h>
#include <stddef.h>
#if defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#endif

#include "tvmk_fixedpoint.h"
#include "tvmk_s8_ops.h"

/* One float to T (bits wide, range [qmin, qmax]): round(x / scale) + zero_point, clamped;
 * NaN gives qmin; a float beyond int32 is never converted. lo and hi: qmin and qmax less
 * the zero point, as floats. Every branch gives the same value; each is the fastest on its
 * FPU. */
#if defined(__arm__) && defined(__ARM_FP) && __ARM_ARCH >= 8
/* Armv8's FPU: clamped as floats by VMAXNM and VMINNM (fmaxf(NaN, lo) is lo). */
#define TVMK_QUANTIZE_ONE(T, bits, qmin, qmax)                                               \
    (void)(qmin);                                                                            \
    (void)(qmax);                                                                            \
    return (T)((int32_t)fminf(fmaxf(r, lo), hi) + zero_point)
#elif defined(__ARM_FEATURE_SAT)
/* Converted where int32 surely holds it (one test, which NaN fails), then saturated by
 * SSAT. */
#define TVMK_QUANTIZE_ONE(T, bits, qmin, qmax)                                               \
    (void)lo;                                                                                \
    (void)hi;                                                                                \
    return (T)(fabsf(r) < 1073741824.0f ? __ssat((int32_t)r + zero_point, bits)              \
                                        : (r > 0.0f ? (qmax) : (qmin)))
#else
#define TVMK_QUANTIZE_ONE(T, bits, qmin, qmax)                                               \
    if (!(r > lo)) { /* NaN too */                                                           \
        return (T)(qmin);                                                                    \
    }                                                                                        \
    return r >= hi ? (T)(qmax) : (T)((int32_t)r + zero_point)
#endif

/* roundf (half away from zero, TFLM's TfLiteRound) without a library call: below 2^23,
 * r less its truncation is its exact fraction, and the integer part plus or minus one is
 * exact; from 2^23 (and NaN, infinities) r is its own rounding. It differs from roundf
 * only in the sign of a zero (-0.3 gives +0), which no integer conversion sees
 * (tests/test_portable_quantize.py checks it against roundf). */
static inline float tvmk_round_half_away(float r)
{
    float t, d;

    if (!(fabsf(r) < 8388608.0f)) {
        return r;
    }
    t = (float)(int32_t)r;
    d = r - t;
    if (d >= 0.5f) {
        t += 1.0f;
    } else if (d <= -0.5f) {
        t -= 1.0f;
    }
    return t;
}

/* Where the FPU has no VRINTA (Armv7E-M's FPv4, whose roundf is newlib's: 20-odd
 * instructions a call), the inline rounding; elsewhere roundf (one VRINTA on Armv8). */
#if defined(__arm__) && defined(__ARM_FP) && __ARM_ARCH < 8
#define TVMK_ROUND_HALF_AWAY tvmk_round_half_away
#else
#define TVMK_ROUND_HALF_AWAY roundf
#endif

/* QUANTIZE float32 -> T (bits wide, range [qmin, qmax]), tvmk_quantize_s8_params. */
#define TVMK_QUANTIZE_INT(name, T, bits, qmin, qmax)                                         \
    static inline T name##_one(float x, float scale, int32_t zero_point, float lo, float hi) \
    {                                                                                        \
        const float r = TVMK_ROUND_HALF_AWAY(x / scale);                                     \
        TVMK_QUANTIZE_ONE(T, bits, qmin, qmax);                                              \
    }                                                                                        \
                                                                                             \
    int32_t name(const float *input, T *output, const struct tvmk_quantize_s8_params *params,\
                 void *resource_handle)                                                      \
    {                                                                                        \
        int32_t i, count, zero_point;                                                        \
        float scale, lo, hi;                                                                 \
                                                                                             \
        (void)resource_handle;                                                               \
        if (input == NULL || output == NULL || params == NULL || params->count < 0 ||        \
            !(params->scale > 0.0f)) {                                                       \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        count = params->count;                                                               \
        scale = params->scale;                                                               \
        zero_point = params->zero_point;                                                     \
        lo = (float)((qmin) - zero_point);                                                   \
        hi = (float)((qmax) - zero_point);                                                   \
        for (i = 0; i < count; ++i) {                                                        \
            output[i] = name##_one(input[i], scale, zero_point, lo, hi);                     \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* One requantization kernel per (input, output) C type, tvmk_quantize_s8_params: clamp to
 * [lo, hi] of MultiplyByQuantizedMultiplier(q - input_zero_point) + zero_point.
 * q - input_zero_point wraps as TFLM's int32 arithmetic does (the numpy reference
 * refuses inputs where it would). */
#define TVMK_REQUANTIZE(name, in_t, out_t, lo, hi)                                          \
    int32_t name(const in_t *input, out_t *output,                                          \
                 const struct tvmk_quantize_s8_params *params, void *resource_handle)       \
    {                                                                                       \
        int32_t i, count, in_zp, multiplier, zero_point;                                    \
        int shift;                                                                          \
                                                                                            \
        (void)resource_handle;                                                              \
        if (input == NULL || output == NULL || params == NULL || params->count < 0 ||       \
            params->shift > 30 || params->shift < -31) {                                    \
            return TVM_DEVICE_ERR_INVALID;                                                  \
        }                                                                                   \
        count = params->count;                                                              \
        in_zp = params->input_zero_point;                                                   \
        multiplier = params->multiplier;                                                    \
        shift = (int)params->shift;                                                         \
        zero_point = params->zero_point;                                                    \
        for (i = 0; i < count; ++i) {                                                       \
            const int32_t d = (int32_t)((uint32_t)(int32_t)input[i] - (uint32_t)in_zp);     \
            const int64_t q =                                                               \
                (int64_t)tvmk_multiply_by_quantized_multiplier(d, multiplier, shift) +      \
                zero_point;                                                                 \
            output[i] = (out_t)(q < (lo) ? (lo) : (q > (hi) ? (hi) : q));                   \
        }                                                                                   \
        return TVM_DEVICE_OK;                                                               \
    }

/* DEQUANTIZE T -> float32, tvmk_quantize_s8_params: (q - zero_point) * scale. */
#define TVMK_DEQUANTIZE_INT(name, T)                                                         \
    int32_t name(const T *input, float *output, const struct tvmk_quantize_s8_params *params,\
                 void *resource_handle)                                                      \
    {                                                                                        \
        int32_t i, count, zero_point;                                                        \
        float scale;                                                                         \
                                                                                             \
        (void)resource_handle;                                                               \
        if (input == NULL || output == NULL || params == NULL || params->count < 0) {        \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        count = params->count;                                                               \
        zero_point = params->zero_point;                                                     \
        scale = params->scale;                                                               \
        for (i = 0; i < count; ++i) {                                                        \
            output[i] = (float)((int32_t)input[i] - zero_point) * scale;                     \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#endif /* TVMK_PORTABLE_QUANTIZE_INT_H_ */
