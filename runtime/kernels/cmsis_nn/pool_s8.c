/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: AVERAGE_POOL_2D and MAX_POOL_2D int8 through arm_avgpool_s8 and
 * arm_max_pool_s8, as TFLM's kernels/cmsis_nn/pooling.cc (the glue of
 * tvmk_cmsis_nn_glue.h, which s16.c instantiates for int16).
 */
#include "tvmk_cmsis_nn_glue.h"

TVMK_CMSIS_NN_POOLS(s8, int8_t)
