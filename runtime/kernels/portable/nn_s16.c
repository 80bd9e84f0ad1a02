/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16 (16x8): CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * as TFLM's reference_integer_ops ConvPerChannel, DepthwiseConvPerChannel and
 * FullyConnected(PerChannel) of int16 input, int8 weights and int64 bias: int64
 * accumulation, the int64 MultiplyByQuantizedMultiplier (per output channel for the
 * convs), then the clamp to the activation's range. The convs read no offsets (TFLM's
 * 16x8 convs have none; tvmdev refuses a nonzero zero point); fully_connected adds them.
 * With an int32 bias (the _b32 kernels), TFLM's int32-accumulator variant: the int32
 * MultiplyByQuantizedMultiplier. The int8 kernels' bodies (conv_int.h). Outputs must not
 * overlap inputs.
 */
#include "conv_int.h"
#include "tvmk_s16.h"

TVMK_CONV_INT(tvmk_conv2d_s16, int16_t, int64_t, int64_t, 0, tvmk_requant_s16)
TVMK_CONV_INT(tvmk_conv2d_s16_b32, int16_t, int32_t, int64_t, 0, tvmk_requant_s16_b32)
TVMK_DEPTHWISE_CONV_INT(tvmk_depthwise_conv2d_s16, int16_t, int64_t, int64_t, 0,
                        tvmk_requant_s16)
TVMK_FULLY_CONNECTED_INT(tvmk_fully_connected_s16, int16_t, int64_t, int64_t,
                         tvmk_requant_s16, 7)
TVMK_FULLY_CONNECTED_INT(tvmk_fully_connected_s16_b32, int16_t, int32_t, int64_t,
                         tvmk_requant_s16_b32, 7)
