/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 MEAN over some dims, TFLM's requantization (tvmk_s8_ops.h:
 * tvmk_mean_s8_params), the body mean_int.h shares with int16's.
 */
#include "mean_int.h"

TVMK_MEAN_INT(tvmk_mean_s8, int8_t, -128, 127)
