/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: SOFTMAX int8 -> int8 through arm_softmax_s8 (TFLM's kernels/cmsis_nn/softmax.cc).
 */
#include "tvmk_cmsis_nn_glue.h"

int32_t tvmk_cmsis_nn_softmax_s8(const int8_t *input, int8_t *output,
                                 const struct tvmk_softmax_s8_params *p, void *resource_handle)
{
    (void)resource_handle;
    arm_softmax_s8(input, p->outer, p->depth, p->input_multiplier, p->input_left_shift,
                   p->diff_min, output);
    return TVM_DEVICE_OK;
}
