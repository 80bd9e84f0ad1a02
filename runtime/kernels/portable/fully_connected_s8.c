/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: FULLY_CONNECTED as TFLM's
 * reference_integer_ops::FullyConnected (FullyConnectedPerChannel with per-channel
 * weights): int32 accumulation of
 * (w + weights_offset) * (x + input_offset), plus the bias, requantized
 * (MultiplyByQuantizedMultiplier), plus output_offset, clamped to the activation's
 * range: the body of conv_int.h, which nn_s16.c instantiates for int16. output must not
 * overlap input.
 */
#include "conv_int.h"

TVMK_FULLY_CONNECTED_INT(tvmk_fully_connected_s8, int8_t, int32_t, int32_t, tvmk_requant_s8,
                         30)
