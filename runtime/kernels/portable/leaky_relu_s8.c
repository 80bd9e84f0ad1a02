/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 LEAKY_RELU, TFLM's QuantizeLeakyRelu (tvmk_s8_ops.h:
 * tvmk_leaky_relu_s8_params). Y may alias X (computed in place).
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8_ops.h"

int32_t tvmk_leaky_relu_s8(const int8_t *X, int8_t *Y,
                           const struct tvmk_leaky_relu_s8_params *params, void *resource_handle)
{
    const struct tvmk_leaky_relu_s8_params *p = params;
    int32_t i, count, in_zp, out_zp, alpha_mag, alpha_shift, id_mult, id_shift, negate;

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL || p->count < 0 || p->alpha_multiplier == INT32_MIN ||
        p->alpha_shift < -31 || p->alpha_shift > 30 || p->identity_shift < -31 ||
        p->identity_shift > 30) {
        return TVM_DEVICE_ERR_INVALID;
    }
    /* Locals: a store through an int8_t pointer may alias the params. */
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
        Y[i] = (int8_t)(out > 127 ? 127 : (out < -128 ? -128 : out));
    }
    return TVM_DEVICE_OK;
}
