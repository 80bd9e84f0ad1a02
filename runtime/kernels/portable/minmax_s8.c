/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 MAXIMUM and MINIMUM with numpy broadcasting: the raw
 * values compared, as TFLM does (generation requires one quantization on the inputs and
 * the output). The output may alias an operand of the output's shape.
 */
#include "binary_s8.h"

static int32_t tvmk_minmax_s8(int op, const int8_t *A, const int8_t *B, int8_t *C,
                              const struct tvmk_binary_params *params)
{
    struct tvmk_binary_s8 g;

    if (A == NULL || B == NULL || C == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.ndim = params->ndim;
    g.count = params->count;
    g.shape = params->shape;
    g.a_strides = params->a_strides;
    g.b_strides = params->b_strides;
    g.op = op;
    g.add = NULL;
    g.mul = NULL;
    g.act_min = -128;
    g.act_max = 127;
    return tvmk_binary_s8_run(&g, A, B, C);
}

int32_t tvmk_maximum_s8(const int8_t *A, const int8_t *B, int8_t *C,
                        const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_minmax_s8(TVMK_BINARY_S8_MAX, A, B, C, params);
}

int32_t tvmk_minimum_s8(const int8_t *A, const int8_t *B, int8_t *C,
                        const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_minmax_s8(TVMK_BINARY_S8_MIN, A, B, C, params);
}
