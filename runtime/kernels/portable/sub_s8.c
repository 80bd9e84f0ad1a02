/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 SUB with numpy broadcasting and a fused activation,
 * TFLM's arithmetic (ADD's, tvmk_add_s8_params, with the scaled B subtracted; the body of
 * binary_int.h). The output may alias an operand of the output's shape.
 */
#include "binary_int.h"

TVMK_BINARY_INT_RUN(s8, int8_t)

TVMK_ADD_INT(tvmk_sub_s8, s8, int8_t, TVMK_BINARY_INT_SUB)
