/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 SUB with numpy broadcasting and a fused activation,
 * TFLM's arithmetic (ADD's, tvmk_add_s8_params, with the scaled B subtracted). The
 * output may alias an operand of the output's shape.
 */
#include "binary_s8.h"

int32_t tvmk_sub_s8(const int8_t *A, const int8_t *B, int8_t *C,
                    const struct tvmk_add_s8_params *params, void *resource_handle)
{
    struct tvmk_binary_s8 g;

    (void)resource_handle;
    if (A == NULL || B == NULL || C == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->left_shift < 0 || params->left_shift > 30) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.ndim = params->ndim;
    g.count = params->count;
    g.shape = params->shape;
    g.a_strides = params->a_strides;
    g.b_strides = params->b_strides;
    g.op = TVMK_BINARY_S8_SUB;
    g.add = params;
    g.mul = NULL;
    g.act_min = params->act_min;
    g.act_max = params->act_max;
    return tvmk_binary_s8_run(&g, A, B, C);
}
