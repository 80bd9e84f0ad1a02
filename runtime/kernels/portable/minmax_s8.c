/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 MAXIMUM and MINIMUM with numpy broadcasting: the raw
 * values compared, as TFLM does (generation requires one quantization on the inputs and
 * the output; the body of binary_int.h). The output may alias an operand of the output's
 * shape.
 */
#include "binary_int.h"

TVMK_BINARY_INT_RUN(s8, int8_t)

TVMK_MINMAX_INT(tvmk_maximum_s8, s8, int8_t, TVMK_BINARY_INT_MAX, -128, 127)
TVMK_MINMAX_INT(tvmk_minimum_s8, s8, int8_t, TVMK_BINARY_INT_MIN, -128, 127)
