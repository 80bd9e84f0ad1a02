/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: PAD / PADV2 (tvmk_pad_s8_params, by rows: pad_rows.h;
 * output must not overlap data) and LEAKY_RELU (TFLM's QuantizeLeakyRelu,
 * tvmk_leaky_relu_s8_params; Y may alias X) and CONCATENATION (tvmk_concat_s8_params: a copy, every input quantized as
 * the output; concat_result must not overlap an input).
 */
#include <stddef.h>

#include "pad_rows.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

int32_t tvmk_pad_s16(const int16_t *data, int16_t *output,
                     const struct tvmk_pad_s8_params *params, void *resource_handle)
{
    const struct tvmk_pad_s8_params *p = params;
    int16_t value;

    (void)resource_handle;
    if (data == NULL || output == NULL || p == NULL || p->count < 0 || p->value < -32768 ||
        p->value > 32767 || !tvmk_pad_rows_valid(p->ndim, p->out_shape, p->in_shape, p->begin)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    value = (int16_t)p->value;
    if (p->count > 0) {
        tvmk_pad_rows(data, output, sizeof(int16_t), p->ndim, p->out_shape, p->in_shape,
                      p->begin, &value);
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_leaky_relu_s16(const int16_t *X, int16_t *Y,
                            const struct tvmk_leaky_relu_s8_params *params,
                            void *resource_handle)
{
    const struct tvmk_leaky_relu_s8_params *p = params;
    int32_t i, count, in_zp, out_zp, alpha_mag, alpha_shift, id_mult, id_shift, negate;

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL || p->count < 0 || p->alpha_multiplier == INT32_MIN ||
        p->alpha_shift < -31 || p->alpha_shift > 30 || p->identity_shift < -31 ||
        p->identity_shift > 30) {
        return TVM_DEVICE_ERR_INVALID;
    }
    /* Locals: a store through an int16_t pointer may alias the params. */
    count = p->count;
    in_zp = p->input_zero_point;
    out_zp = p->output_zero_point;
    negate = p->alpha_multiplier < 0;
    alpha_mag = negate ? -p->alpha_multiplier : p->alpha_multiplier;
    alpha_shift = p->alpha_shift;
    id_mult = p->identity_multiplier;
    id_shift = p->identity_shift;
    for (i = 0; i < count; ++i) {
        const int32_t v = (int32_t)X[i] - in_zp;
        int32_t out;
        if (v >= 0) {
            out = out_zp + tvmk_multiply_by_quantized_multiplier(v, id_mult, id_shift);
        } else {
            const int32_t s = tvmk_multiply_by_quantized_multiplier(v, alpha_mag, alpha_shift);
            out = out_zp + (negate ? -s : s);
        }
        Y[i] = (int16_t)(out > 32767 ? 32767 : (out < -32768 ? -32768 : out));
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_concat_s16(const int16_t *const *inputs, int16_t *concat_result,
                        const struct tvmk_concat_s8_params *params, void *resource_handle)
{
    const struct tvmk_concat_s8_params *p = params;
    int16_t *y = concat_result;
    int32_t i, o, j;

    (void)resource_handle;
    if (inputs == NULL || concat_result == NULL || p == NULL || p->ninputs < 1 ||
        p->ninputs > TVMK_CONCAT_MAX_INPUTS || p->outer < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->ninputs; ++i) {
        if (inputs[i] == NULL || p->blocks[i] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->ninputs; ++i) {
            const int16_t *x = inputs[i] + (size_t)o * (size_t)p->blocks[i];
            for (j = 0; j < p->blocks[i]; ++j) {
                *y++ = x[j];
            }
        }
    }
    return TVM_DEVICE_OK;
}
