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

#endif /* TVMK_CMSIS_NN_GLUE_H_ */
