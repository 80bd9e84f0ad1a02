/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 LEAKY_RELU, TFLM's QuantizeLeakyRelu (tvmk_s8_ops.h:
 * tvmk_leaky_relu_s8_params; the body of activation_int.h). Y may alias X (computed in
 * place).
 */
#include "activation_int.h"

TVMK_LEAKY_RELU_INT(tvmk_leaky_relu_s8, int8_t, -128, 127)
