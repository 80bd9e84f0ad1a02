/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 TANH, TFLM's algorithm (tvmk_s8_ops.h:
 * tvmk_tanh_s8_params); the output is in 1/128 steps around 0. output may alias input.
 */
#include "fixed_unary_s8.h"

int32_t tvmk_tanh_s8(const int8_t *input, int8_t *output,
                     const struct tvmk_tanh_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    if (params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    return tvmk_fixed_unary_s8(1, input, output, params->count, params->input_zero_point,
                               params->input_range_radius, params->input_multiplier,
                               params->input_left_shift);
}
