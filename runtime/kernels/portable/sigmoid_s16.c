/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: LOGISTIC and TANH as TFLM's reference_integer_ops
 * Logistic and Tanh of int16 compute them (tvmk_sigmoid_s16_params): each input rescaled
 * by input_multiplier and a rounding right input_left_shift (3 << input_left_shift and no
 * shift when input_multiplier is 0, TFLM's power-of-two case), then interpolated in
 * params->sigmoid_table (sigmoid_lut.h). Y may alias X (computed in place).
 */
#include <stddef.h>

#include "sigmoid_lut.h"
#include "tvmk_s16.h"

/* The multiplier and shift Eval uses; 0 when the params are out of TFLM's range. */
static int tvmk_lut_scaling(const struct tvmk_sigmoid_s16_params *p, int32_t *multiplier,
                            int32_t *shift)
{
    if (p->count < 0 || p->sigmoid_table == NULL || p->input_multiplier < 0 ||
        p->input_multiplier > 32767 || p->input_left_shift < 0 || p->input_left_shift > 31) {
        return 0;
    }
    *multiplier = p->input_multiplier;
    *shift = p->input_left_shift;
    if (*multiplier == 0) { /* power of two: the shift becomes the multiplier's */
        if (*shift > 1) {
            return 0;
        }
        *multiplier = 3 << *shift;
        *shift = 0;
    }
    return 1;
}

int32_t tvmk_sigmoid_s16(const int16_t *X, int16_t *Y,
                         const struct tvmk_sigmoid_s16_params *params, void *resource_handle)
{
    int32_t i, count, multiplier, shift;
    const uint16_t *table;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL ||
        !tvmk_lut_scaling(params, &multiplier, &shift)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    /* Locals: a store through Y may alias the params. */
    count = params->count;
    table = params->sigmoid_table;
    if (shift == 0) { /* the power-of-two case, its own loop: no shift to test per value */
        for (i = 0; i < count; ++i) {
            Y[i] = tvmk_lut_sigmoid16(table, X[i] * multiplier);
        }
        return TVM_DEVICE_OK;
    }
    for (i = 0; i < count; ++i) {
        Y[i] = tvmk_lut_sigmoid16(table, tvmk_lut_scaled(X[i], multiplier, shift));
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_tanh_s16(const int16_t *input, int16_t *output,
                      const struct tvmk_sigmoid_s16_params *params, void *resource_handle)
{
    int32_t i, count, multiplier, shift;
    const uint16_t *table;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL ||
        !tvmk_lut_scaling(params, &multiplier, &shift)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    count = params->count;
    table = params->sigmoid_table;
    if (shift == 0) {
        for (i = 0; i < count; ++i) {
            output[i] = tvmk_lut_tanh16(table, input[i] * multiplier);
        }
        return TVM_DEVICE_OK;
    }
    for (i = 0; i < count; ++i) {
        output[i] = tvmk_lut_tanh16(table, tvmk_lut_scaled(input[i], multiplier, shift));
    }
    return TVM_DEVICE_OK;
}
