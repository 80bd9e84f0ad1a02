/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16 (16x8): TRANSPOSE_CONV (NHWC, W [M, KH, KW, C / group],
 * int8 weights, int64 bias, per-channel requantization) as TFLM's
 * reference_integer_ops::TransposeConv of int16 input: int64 sums of x * w (no offsets:
 * tvmdev refuses a nonzero zero point, which TFLM's kernel would ignore), plus the bias,
 * requantized by the int64 MultiplyByQuantizedMultiplier and clamped. The params are
 * tvmk_conv2d_s8_params (pad_top / pad_left: where input pixel 0 lands before the output).
 * Each output value is one sum over the input pixels that reach it (an integer sum, so
 * TFLM's scatter order gives the same), without TFLM's int64 scratch: the int8 kernel's
 * body (conv_int.h). Y must not overlap X.
 */
#include "conv_int.h"
#include "tvmk_s16.h"

TVMK_TCONV_INT(tvmk_transpose_conv2d_s16, int16_t, int64_t, int64_t, 0, tvmk_requant_s16)
