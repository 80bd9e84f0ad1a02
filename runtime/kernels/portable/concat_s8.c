/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 CONCATENATION (tvmk_s8_ops.h: tvmk_concat_s8_params), a
 * copy: every input is quantized as the output (TFLM requires it). For each outer index,
 * each input's block follows the previous one's (the body of moves_int.h).
 * concat_result must not overlap an input.
 */
#include "moves_int.h"

TVMK_CONCAT_INT(tvmk_concat_s8, int8_t)
