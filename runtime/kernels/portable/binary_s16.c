/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: ADD, SUB and MUL with numpy broadcasting and a fused
 * activation, TFLM's int16 arithmetic (the int8 forms' params: tvmk_add_s8_params with
 * left_shift 15, tvmk_mul_s8_params); MAXIMUM and MINIMUM of raw values
 * (tvmk_binary_params). The int8 kernels' body (binary_int.h) over int16 elements.
 * Output elements are produced in order, each after its operands are read, so the output
 * may alias an operand of the output's shape.
 */
#include "binary_int.h"
#include "tvmk_s16.h"

TVMK_BINARY_INT_RUN(s16, int16_t)

TVMK_ADD_INT(tvmk_add_s16, s16, int16_t, TVMK_BINARY_INT_ADD)
TVMK_ADD_INT(tvmk_sub_s16, s16, int16_t, TVMK_BINARY_INT_SUB)
TVMK_MUL_INT(tvmk_mul_s16, s16, int16_t)
TVMK_MINMAX_INT(tvmk_maximum_s16, s16, int16_t, TVMK_BINARY_INT_MAX, -32768, 32767)
TVMK_MINMAX_INT(tvmk_minimum_s16, s16, int16_t, TVMK_BINARY_INT_MIN, -32768, 32767)
