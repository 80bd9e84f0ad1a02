/*
 * tvmdev portable kernels, int8: QUANTIZE (float32 -> int8) as TFLM's AffineQuantize,
 * QUANTIZE of int8 (a requantization) as TFLM's Requantize,
 * DEQUANTIZE (int8 -> float32) as TFLM's Dequantize, and RESHAPE of int8 data (a copy,
 * skipped in place). Elementwise: the output may alias the input only for reshape.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

int32_t tvmk_quantize_s8(const float *input, int8_t *output,
                         const struct tvmk_quantize_s8_params *params, void *resource_handle)
{
    int32_t i;
    float lo, hi;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0 ||
        !(params->scale > 0.0f)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    /* round(x / scale) + zero_point, clamped: compared as floats first, so that a value
     * beyond int32 is never converted. */
    lo = (float)(-128 - params->zero_point);
    hi = (float)(127 - params->zero_point);
    for (i = 0; i < params->count; ++i) {
        float r = roundf(input[i] / params->scale);
        int32_t q;
        if (!(r > lo)) { /* NaN too */
            q = -128;
        } else if (r >= hi) {
            q = 127;
        } else {
            q = (int32_t)r + params->zero_point;
        }
        output[i] = (int8_t)q;
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_requantize_s8(const int8_t *input, int8_t *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0 ||
        params->shift > 30 || params->shift < -31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        int32_t q = tvmk_multiply_by_quantized_multiplier(
                        (int32_t)input[i] - params->input_zero_point, params->multiplier,
                        (int)params->shift) + params->zero_point;
        q = q < -128 ? -128 : q;
        output[i] = (int8_t)(q > 127 ? 127 : q);
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_dequantize_s8(const int8_t *input, float *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        output[i] = (float)((int32_t)input[i] - params->zero_point) * params->scale;
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
