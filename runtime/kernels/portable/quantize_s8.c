/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: QUANTIZE (float32 -> int8) as TFLM's AffineQuantize,
 * QUANTIZE of int8 (a requantization) as TFLM's Requantize,
 * DEQUANTIZE (int8 -> float32) as TFLM's Dequantize, and RESHAPE of int8 data (a copy,
 * skipped in place): the bodies of quantize_int.h and moves_int.h, which quantize_s16.c
 * instantiates for int16. Elementwise, in order: QUANTIZE and the requantization may
 * write over their input (fewer or as many bytes per element; int8 stores may alias any
 * type), DEQUANTIZE may not (its elements are larger).
 */
#include "moves_int.h"
#include "quantize_int.h"
#include "tvmk_s8.h"

TVMK_QUANTIZE_INT(tvmk_quantize_s8, int8_t, 8, -128, 127)
TVMK_REQUANTIZE(tvmk_requantize_s8, int8_t, int8_t, -128, 127)
TVMK_DEQUANTIZE_INT(tvmk_dequantize_s8, int8_t)
TVMK_RESHAPE_INT(tvmk_reshape_s8, int8_t)
