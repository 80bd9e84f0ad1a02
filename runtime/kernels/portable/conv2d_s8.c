/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: CONV_2D (NHWC, per-channel requantization) as TFLM's
 * reference_integer_ops::ConvPerChannel: the body of conv_int.h, which nn_s16.c
 * instantiates for int16. Y must not overlap X.
 */
#include "conv_int.h"

TVMK_CONV_INT(tvmk_conv2d_s8, int8_t, int32_t, int32_t, p->input_offset, tvmk_requant_s8)
