/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: TRANSPOSE_CONV (NHWC, W [M, KH, KW, C / group],
 * per-channel requantization) as TFLM's reference_integer_ops::TransposeConv: int32 sums
 * of (x + input_offset) * w, plus the bias, requantized, offset and clamped. The params
 * are tvmk_conv2d_s8_params (pad_top / pad_left: where input pixel 0 lands before the
 * output). Each output value is one sum over the input pixels that reach it (an integer
 * sum, so TFLM's scatter order gives the same), without TFLM's int32 scratch: the body
 * of conv_int.h, which transpose_conv2d_s16.c instantiates for int16. Y must not overlap
 * X.
 */
#include "conv_int.h"

TVMK_TCONV_INT(tvmk_transpose_conv2d_s8, int8_t, int32_t, int32_t, p->input_offset,
               tvmk_requant_s8)
