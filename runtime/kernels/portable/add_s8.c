/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 ADD with numpy broadcasting and a fused activation,
 * TFLM's arithmetic (tvmk_s8_ops.h: tvmk_add_s8_params; the body of binary_int.h). The
 * output may alias an operand of the output's shape.
 */
#include "binary_int.h"

TVMK_BINARY_INT_RUN(s8, int8_t)

TVMK_ADD_INT(tvmk_add_s8, s8, int8_t, TVMK_BINARY_INT_ADD)
