/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: PAD / PADV2 int8 through arm_pad_s8 (row copies and fills), as TFLM's
 * kernels/cmsis_nn/pad.cc calls it: the dims right-aligned into N, H, W, C (a lower rank's
 * leading dims 1, unpadded). A rank above 4 was declined at generation time
 * (tvmdev/plan/hooks/cmsis_nn.py) and went to the portable kernel.
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_pad_s8(const int8_t *data, int8_t *output,
                             const struct tvmk_pad_s8_params *p, void *resource_handle)
{
    int32_t in[4], pre[4], post[4];
    int32_t d;
    cmsis_nn_dims in_size, pre_pad, post_pad;
    (void)resource_handle;

    if (data == NULL || output == NULL || p == NULL || p->ndim < 1 || p->ndim > 4 ||
        p->value < -128 || p->value > 127) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (d = 0; d < 4; ++d) {
        const int32_t k = d - (4 - p->ndim); /* the params' dim, or < 0 before them */
        in[d] = k < 0 ? 1 : p->in_shape[k];
        pre[d] = k < 0 ? 0 : p->begin[k];
        post[d] = k < 0 ? 0 : p->out_shape[k] - p->in_shape[k] - p->begin[k];
        if (in[d] < 0 || pre[d] < 0 || post[d] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    in_size = tvmk_cmsis_nn_dims(in[0], in[1], in[2], in[3]);
    pre_pad = tvmk_cmsis_nn_dims(pre[0], pre[1], pre[2], pre[3]);
    post_pad = tvmk_cmsis_nn_dims(post[0], post[1], post[2], post[3]);
    return tvmk_cmsis_nn_status(
        arm_pad_s8(data, output, (int8_t)p->value, &in_size, &pre_pad, &post_pad));
}
