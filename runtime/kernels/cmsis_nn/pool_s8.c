/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: AVERAGE_POOL_2D and MAX_POOL_2D int8 through arm_avgpool_s8 and
 * arm_max_pool_s8, as TFLM's kernels/cmsis_nn/pooling.cc.
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_avgpool2d_s8(const int8_t *X, int8_t *Y,
                                   const struct tvmk_pool2d_s8_params *p,
                                   void *resource_handle)
{
    cmsis_nn_context ctx;
    cmsis_nn_pool_params pool;
    cmsis_nn_dims in, filter, out;
    (void)resource_handle;
    tvmk_cmsis_nn_pool_args(p, &ctx, &pool, &in, &filter, &out);
    if (arm_avgpool_s8_get_buffer_size(out.w, in.c) > ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    }
    return tvmk_cmsis_nn_status(arm_avgpool_s8(&ctx, &pool, &in, X, &filter, &out, Y));
}

int32_t tvmk_cmsis_nn_maxpool2d_s8(const int8_t *X, int8_t *Y,
                                   const struct tvmk_pool2d_s8_params *p,
                                   void *resource_handle)
{
    cmsis_nn_context ctx;
    cmsis_nn_pool_params pool;
    cmsis_nn_dims in, filter, out;
    (void)resource_handle;
    tvmk_cmsis_nn_pool_args(p, &ctx, &pool, &in, &filter, &out);
    return tvmk_cmsis_nn_status(arm_max_pool_s8(&ctx, &pool, &in, X, &filter, &out, Y));
}
