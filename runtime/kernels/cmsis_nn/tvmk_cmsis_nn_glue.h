/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cmsis_nn kernels share: CMSIS-NN's header and its status turned into tvmdev's,
 * the arguments their int8 and int16 forms fill alike, and the pools' glue of either type.
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

/* A convolution's CMSIS-NN params (int8: the params' offsets; int16: none), as TFLM's
 * kernels/cmsis_nn/conv.cc fills them. */
static inline cmsis_nn_conv_params tvmk_cmsis_nn_conv(const struct tvmk_conv2d_s8_params *p,
                                                      int32_t input_offset,
                                                      int32_t output_offset)
{
    cmsis_nn_conv_params conv;
    conv.input_offset = input_offset;
    conv.output_offset = output_offset;
    conv.stride.h = p->stride_h;
    conv.stride.w = p->stride_w;
    conv.padding.h = p->pad_top;
    conv.padding.w = p->pad_left;
    conv.dilation.h = p->dil_h;
    conv.dilation.w = p->dil_w;
    conv.activation.min = p->activation_min;
    conv.activation.max = p->activation_max;
    return conv;
}

/* A depthwise convolution's CMSIS-NN params (int8: the params' offsets; int16: none), as
 * TFLM's kernels/cmsis_nn/depthwise_conv.cc fills them. */
static inline cmsis_nn_dw_conv_params tvmk_cmsis_nn_dw_conv(
    const struct tvmk_depthwise_conv2d_s8_params *p, int32_t input_offset,
    int32_t output_offset)
{
    cmsis_nn_dw_conv_params dw;
    dw.input_offset = input_offset;
    dw.output_offset = output_offset;
    dw.ch_mult = p->mult;
    dw.stride.h = p->stride_h;
    dw.stride.w = p->stride_w;
    dw.padding.h = p->pad_top;
    dw.padding.w = p->pad_left;
    dw.dilation.h = p->dil_h;
    dw.dilation.w = p->dil_w;
    dw.activation.min = p->activation_min;
    dw.activation.max = p->activation_max;
    return dw;
}

/* AVERAGE_POOL_2D and MAX_POOL_2D of T through CMSIS-NN's arm_avgpool_<sfx> and
 * arm_max_pool_<sfx> (sfx: s8 or s16), as TFLM's kernels/cmsis_nn/pooling.cc. */
#define TVMK_CMSIS_NN_POOLS(sfx, T)                                                          \
    int32_t tvmk_cmsis_nn_avgpool2d_##sfx(const T *X, T *Y,                                  \
                                          const struct tvmk_pool2d_s8_params *p,             \
                                          void *resource_handle)                             \
    {                                                                                        \
        cmsis_nn_context ctx;                                                                \
        cmsis_nn_pool_params pool;                                                           \
        cmsis_nn_dims in, filter, out;                                                       \
        (void)resource_handle;                                                               \
        tvmk_cmsis_nn_pool_args(p, &ctx, &pool, &in, &filter, &out);                         \
        if (arm_avgpool_##sfx##_get_buffer_size(out.w, in.c) > ctx.size) {                   \
            return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */            \
        }                                                                                    \
        return tvmk_cmsis_nn_status(arm_avgpool_##sfx(&ctx, &pool, &in, X, &filter, &out, Y)); \
    }                                                                                        \
                                                                                             \
    int32_t tvmk_cmsis_nn_maxpool2d_##sfx(const T *X, T *Y,                                  \
                                          const struct tvmk_pool2d_s8_params *p,             \
                                          void *resource_handle)                             \
    {                                                                                        \
        cmsis_nn_context ctx;                                                                \
        cmsis_nn_pool_params pool;                                                           \
        cmsis_nn_dims in, filter, out;                                                       \
        (void)resource_handle;                                                               \
        tvmk_cmsis_nn_pool_args(p, &ctx, &pool, &in, &filter, &out);                         \
        return tvmk_cmsis_nn_status(arm_max_pool_##sfx(&ctx, &pool, &in, X, &filter, &out,   \
                                                       Y));                                  \
    }

#endif /* TVMK_CMSIS_NN_GLUE_H_ */
