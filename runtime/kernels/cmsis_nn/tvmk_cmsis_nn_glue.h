/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cmsis_nn kernels share: CMSIS-NN's header and its status turned into tvmdev's.
 */
#ifndef TVMK_CMSIS_NN_GLUE_H_
#define TVMK_CMSIS_NN_GLUE_H_

#include "arm_nnfunctions.h"
#include "tvmk_cmsis_nn.h"

static inline int32_t tvmk_cmsis_nn_status(arm_cmsis_nn_status status)
{
    return status == ARM_CMSIS_NN_SUCCESS ? TVM_DEVICE_OK : TVM_DEVICE_ERR_INVALID;
}

static inline cmsis_nn_dims tvmk_cmsis_nn_dims(int32_t n, int32_t h, int32_t w, int32_t c)
{
    cmsis_nn_dims d;
    d.n = n;
    d.h = h;
    d.w = w;
    d.c = c;
    return d;
}

/* Per-channel requantization arrays as CMSIS-NN takes them: it only reads them, but its
 * struct is not const-qualified. */
static inline cmsis_nn_per_channel_quant_params tvmk_cmsis_nn_per_channel(
    const int32_t *multiplier, const int32_t *shift)
{
    cmsis_nn_per_channel_quant_params q;
    q.multiplier = (int32_t *)(uintptr_t)multiplier;
    q.shift = (int32_t *)(uintptr_t)shift;
    return q;
}

#endif /* TVMK_CMSIS_NN_GLUE_H_ */
