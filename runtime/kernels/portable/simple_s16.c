/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: PAD / PADV2 (tvmk_pad_s8_params; output must not
 * overlap data) and LEAKY_RELU (TFLM's QuantizeLeakyRelu, tvmk_leaky_relu_s8_params;
 * Y may alias X) and CONCATENATION (tvmk_concat_s8_params: a copy, every input quantized as
 * the output; concat_result must not overlap an input) and MEAN (TFLM's QuantizedMeanOrSum,
 * tvmk_mean_s8_params): the int8 kernels' bodies (moves_int.h, activation_int.h,
 * mean_int.h) over int16 elements.
 */
#include "activation_int.h"
#include "mean_int.h"
#include "moves_int.h"
#include "tvmk_s16.h"

TVMK_PAD_INT(tvmk_pad_s16, int16_t, -32768, 32767)
TVMK_LEAKY_RELU_INT(tvmk_leaky_relu_s16, int16_t, -32768, 32767)
TVMK_CONCAT_INT(tvmk_concat_s16, int16_t)
TVMK_MEAN_INT(tvmk_mean_s16, int16_t, -32768, 32767)
