/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: QUANTIZE float32 -> int16 (TFLM's AffineQuantize), the
 * requantizations TFLM computes with an int16 or int32 side (Requantize), DEQUANTIZE
 * int16 -> float32, RESHAPE of int16 data (a copy, skipped in place) and TRANSPOSE (the
 * walk of transpose.h over 2-byte elements; transposed must not overlap data).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "transpose.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

int32_t tvmk_quantize_s16(const float *input, int16_t *output,
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
    lo = (float)(-32768 - zero_point);
    hi = (float)(32767 - zero_point);
    for (i = 0; i < count; ++i) {
        const float r = roundf(input[i] / scale);
        if (!(r > lo)) { /* NaN too */
            output[i] = -32768;
        } else {
            output[i] = r >= hi ? 32767 : (int16_t)((int32_t)r + zero_point);
        }
    }
    return TVM_DEVICE_OK;
}

/* One requantization kernel per (input, output) C type: q - input_zero_point wraps as
 * TFLM's int32 arithmetic does (the numpy reference refuses inputs where it would). */
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

TVMK_REQUANTIZE(tvmk_requantize_s16_s8, int16_t, int8_t, -128, 127)
TVMK_REQUANTIZE(tvmk_requantize_s8_s16, int8_t, int16_t, -32768, 32767)
TVMK_REQUANTIZE(tvmk_requantize_s16, int16_t, int16_t, -32768, 32767)
TVMK_REQUANTIZE(tvmk_requantize_s16_s32, int16_t, int32_t, INT32_MIN, INT32_MAX)
TVMK_REQUANTIZE(tvmk_requantize_s32_s16, int32_t, int16_t, -32768, 32767)

int32_t tvmk_dequantize_s16(const int16_t *input, float *output,
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

int32_t tvmk_reshape_s16(const int16_t *data, int16_t *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle)
{
    (void)resource_handle;
    if (data == NULL || reshaped == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (reshaped != data && params->count > 0) {
        memmove(reshaped, data, (size_t)params->count * sizeof(int16_t));
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_transpose_s16(const int16_t *data, int16_t *transposed,
                           const struct tvmk_transpose_params *params, void *resource_handle)
{
    int32_t idx[TVMK_MAX_DIMS];

    (void)resource_handle;
    if (data == NULL || transposed == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->ndim < 1 || params->ndim > TVMK_MAX_DIMS || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->count == 0 || params->shape[params->ndim - 1] <= 0) {
        return TVM_DEVICE_OK;
    }
    tvmk_transpose_walk((const unsigned char *)data, (unsigned char *)transposed,
                        sizeof(int16_t), params, idx);
    return TVM_DEVICE_OK;
}
