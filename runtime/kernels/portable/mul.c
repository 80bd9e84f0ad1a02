/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: elementwise A * B with numpy broadcasting (ONNX Mul).
 * The shared body is in binary.h: fast paths for operands of the same shape and for a
 * scalar operand, a strided odometer otherwise. The output may alias an operand of the
 * output's shape (computed in place).
 */
#include "binary.h"

int32_t tvmk_mul_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_binary_f32(TVMK_BINARY_MUL, A, B, C, params);
}
