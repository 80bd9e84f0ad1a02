/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 LOGISTIC, TFLM's algorithm (tvmk_s8_ops.h:
 * tvmk_sigmoid_s8_params); the output is in 1/256 steps from -128. Y may alias X.
 */
#include "fixed_unary_s8.h"

int32_t tvmk_sigmoid_s8(const int8_t *X, int8_t *Y, const struct tvmk_sigmoid_s8_params *params,
                        void *resource_handle)
{
    (void)resource_handle;
    if (params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    return tvmk_fixed_unary_s8(0, X, Y, params->count, params->input_zero_point,
                               params->input_range_radius, params->input_multiplier,
                               params->input_left_shift);
}
