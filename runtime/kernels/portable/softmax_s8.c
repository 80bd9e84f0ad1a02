/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 SOFTMAX over the last axis, TFLM's algorithm
 * (tvmk_s8_ops.h: tvmk_softmax_s8_params; the body of activation_int.h, which
 * softmax_s16.c instantiates with an int16 output). Three passes over each row, no
 * scratch: its maximum; the sum of exp(beta * scale * (x - max)) in Q12.19 (gemmlowp's
 * exp_on_negative_values of the difference rescaled into Q5.26); each output as that exp
 * times the sum's reciprocal, in 1/256 steps from -128. A row whose sum of exps reaches
 * 512 is an error (TFLM aborts on it).
 */
#include "activation_int.h"

TVMK_SOFTMAX_FROM_S8(tvmk_softmax_s8, int8_t, struct tvmk_softmax_s8_params, 8)
