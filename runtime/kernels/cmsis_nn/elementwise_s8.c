/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: ADD and MUL int8 of two operands of the output's shape through
 * arm_elementwise_add_s8 and arm_elementwise_mul_s8 (TFLM's kernels/cmsis_nn/add.cc and
 * mul.cc); a broadcast was declined at generation time to the portable kernels.
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                             const struct tvmk_add_s8_params *p, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_cmsis_nn_status(arm_elementwise_add_s8(
        A, B, p->a_offset, p->a_multiplier, p->a_shift, p->b_offset, p->b_multiplier,
        p->b_shift, p->left_shift, C, p->out_offset, p->out_multiplier, p->out_shift,
        p->act_min, p->act_max, p->count));
}

int32_t tvmk_cmsis_nn_mul_s8(const int8_t *A, const int8_t *B, int8_t *C,
                             const struct tvmk_mul_s8_params *p, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_cmsis_nn_status(arm_elementwise_mul_s8(A, B, p->a_offset, p->b_offset, C,
                                                       p->out_offset, p->out_multiplier,
                                                       p->out_shift, p->act_min, p->act_max,
                                                       p->count));
}
