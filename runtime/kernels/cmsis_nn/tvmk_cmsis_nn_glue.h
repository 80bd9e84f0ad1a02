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

/* A pool's CMSIS-NN arguments (int8 and int16 alike), as TFLM's kernels/cmsis_nn/pooling.cc
 * fills them. */
static inline void tvmk_cmsis_nn_pool_args(const struct tvmk_pool2d_s8_params *p,
                                           cmsis_nn_context *ctx, cmsis_nn_pool_params *pool,
                                           cmsis_nn_dims *in, cmsis_nn_dims *filter,
                                           cmsis_nn_dims *out)
{
    ctx->buf = p->scratch;
    ctx->size = p->scratch_bytes;
    pool->stride.h = p->stride_h;
    pool->stride.w = p->stride_w;
    pool->padding.h = p->pad_top;
    pool->padding.w = p->pad_left;
    pool->activation.min = p->act_min;
    pool->activation.max = p->act_max;
    *in = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    *filter = tvmk_cmsis_nn_dims(1, p->KH, p->KW, 1);
    *out = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, p->C);
}

#endif /* TVMK_CMSIS_NN_GLUE_H_ */
