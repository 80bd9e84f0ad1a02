/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: QUANTIZE float32 -> int16 (TFLM's AffineQuantize), the
 * requantizations TFLM computes with an int16 or int32 side (Requantize), DEQUANTIZE
 * int16 -> float32, RESHAPE of int16 data (a copy, skipped in place): the int8 kernels'
 * bodies (quantize_int.h, moves_int.h); and TRANSPOSE (the walk of transpose.h over
 * 2-byte elements; transposed must not overlap data).
 */
#include "moves_int.h"
#include "quantize_int.h"
#include "transpose.h"
#include "tvmk_s16.h"

TVMK_QUANTIZE_INT(tvmk_quantize_s16, int16_t, 16, -32768, 32767)

TVMK_REQUANTIZE(tvmk_requantize_s16_s8, int16_t, int8_t, -128, 127)
TVMK_REQUANTIZE(tvmk_requantize_s8_s16, int8_t, int16_t, -32768, 32767)
TVMK_REQUANTIZE(tvmk_requantize_s16, int16_t, int16_t, -32768, 32767)
TVMK_REQUANTIZE(tvmk_requantize_s16_s32, int16_t, int32_t, INT32_MIN, INT32_MAX)
TVMK_REQUANTIZE(tvmk_requantize_s32_s16, int32_t, int16_t, -32768, 32767)

TVMK_DEQUANTIZE_INT(tvmk_dequantize_s16, int16_t)
TVMK_RESHAPE_INT(tvmk_reshape_s16, int16_t)

int32_t tvmk_transpose_s16(const int16_t *data, int16_t *transposed,
                           const struct tvmk_transpose_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_transpose_int((const unsigned char *)data, (unsigned char *)transposed,
                              sizeof(int16_t), params);
}
