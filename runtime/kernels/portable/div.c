/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: elementwise A / B with numpy broadcasting (the body in
 * binary.h); IEEE division: x / 0 is an infinity or NaN. The output may alias an operand
 * of the output's shape.
 */
#include "binary.h"

int32_t tvmk_div_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_binary_f32(TVMK_BINARY_DIV, A, B, C, params);
}
