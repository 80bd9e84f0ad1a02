/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's "cmsis_nn" kernel library: the operators with state (tvmk_recurrent.h's
 * params), on CMSIS-NN v7.0.0, called as TFLM's kernels/cmsis_nn call them.
 */
#ifndef TVMK_CMSIS_NN_RECURRENT_H_
#define TVMK_CMSIS_NN_RECURRENT_H_

#include <stdint.h>

#include "tvmk_recurrent.h"

#ifdef __cplusplus
extern "C" {
#endif

int32_t tvmk_cmsis_nn_svdf_s8_s16(const int8_t *input, const int8_t *weights_feature,
                                  const int16_t *weights_time, const int32_t *bias,
                                  int16_t *state, int8_t *output,
                                  const struct tvmk_svdf_s8_params *p, void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_CMSIS_NN_RECURRENT_H_ */
