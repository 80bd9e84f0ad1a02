/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: the operators the plan's fusions make (tvmdev/plan/fuse.py),
 * each computing what two of TFLM's kernels compute in turn, bit for bit. Params are
 * derived at generation time by tvmdev/model/s8/fused.py, whose numpy reference runs the
 * two operators' references in turn.
 */
#ifndef TVMK_FUSED_H_
#define TVMK_FUSED_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* conv2d_add: Y = ADD(CONV_2D(X, W, B), R). The conv's fields are tvmk_conv2d_s8_params'
 * (output_offset, activation_min / activation_max, output_multiplier / output_shift: the
 * intermediate tensor's, which the fusion removed); the ADD's are tvmk_add_s8_params'
 * (A: the conv's value, B: R, of the output's shape). R may alias Y: each output value is
 * written after its R element is read. X must not overlap Y. The scratch is a board
 * library's (cmsis_nn: a tile of the conv's output, and CMSIS-NN's buffer); the portable
 * kernel takes none. */
struct tvmk_conv2d_add_s8_params {
    int32_t N, C, H, W;
    int32_t KH, KW, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t dil_h, dil_w;
    int32_t M, group;
    int32_t input_offset, output_offset;
    int32_t activation_min, activation_max;
    const int32_t *output_multiplier;
    const int32_t *output_shift;
    int32_t a_offset, b_offset;
    int32_t left_shift;
    int32_t a_multiplier, a_shift;
    int32_t b_multiplier, b_shift;
    int32_t out_multiplier, out_shift;
    int32_t out_offset;
    int32_t act_min, act_max;
    int32_t scratch_bytes;
    void *scratch;
};

/* depthwise_pointwise: Y = CONV_2D(DEPTHWISE_CONV_2D(X, DW, DB), PW, PB), PW [M, 1, 1,
 * C * mult] (stride 1, no padding). The depthwise's fields are
 * tvmk_depthwise_conv2d_s8_params' (output_offset, activation_min / activation_max,
 * output_multiplier / output_shift: the intermediate tensor's, which the fusion removed);
 * the 1x1's are tvmk_conv2d_s8_params' with a pw_ prefix. The scratch holds one output
 * row of the depthwise convolution: OW * C * mult bytes. Y must not overlap X. */
struct tvmk_depthwise_pointwise_s8_params {
    int32_t N, C, H, W;
    int32_t KH, KW, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t dil_h, dil_w;
    int32_t mult;
    int32_t input_offset, output_offset;
    int32_t activation_min, activation_max;
    const int32_t *output_multiplier;
    const int32_t *output_shift;
    int32_t pw_M;
    int32_t pw_input_offset, pw_output_offset;
    int32_t pw_activation_min, pw_activation_max;
    const int32_t *pw_output_multiplier;
    const int32_t *pw_output_shift;
    int32_t scratch_bytes;
    void *scratch;
};

int32_t tvmk_conv2d_add_s8(const int8_t *X, const int8_t *W, const int8_t *R, const int32_t *B,
                           int8_t *Y, const struct tvmk_conv2d_add_s8_params *params,
                           void *resource_handle);
int32_t tvmk_depthwise_pointwise_s8(const int8_t *X, const int8_t *DW, const int32_t *DB,
                                    const int8_t *PW, const int32_t *PB, int8_t *Y,
                                    const struct tvmk_depthwise_pointwise_s8_params *params,
                                    void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_FUSED_H_ */
