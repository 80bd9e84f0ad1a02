/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's "cmsis_nn" kernel library: int8 operators on Arm's CMSIS-NN (v7.0.0), called as
 * TFLM's kernels/cmsis_nn call it, with the portable int8 kernels' calling convention and
 * params structs (tvmk_s8.h, tvmk_s8_ops.h), so an operator takes whichever its board
 * selects. What CMSIS-NN does not serve was declined at generation time (the operator got
 * the portable kernel); a CMSIS-NN argument error here returns TVM_DEVICE_ERR_INVALID.
 *
 * Scratch: conv2d, conv2d_add (a tile of its output first), depthwise_conv2d,
 * fully_connected and avgpool2d get the buffer CMSIS-NN's
 * *_get_buffer_size* functions ask for on the board's architecture (pure C, DSP or MVE),
 * evaluated at generation time and carved from the workspace (params->scratch). Nothing is
 * allocated and no buffer is on the stack. Each call asks CMSIS-NN again, as compiled for
 * the core it runs on, and returns TVM_DEVICE_ERR_INVALID rather than overrun a buffer
 * planned for another architecture (a few instructions per call).
 */
#ifndef TVMK_CMSIS_NN_H_
#define TVMK_CMSIS_NN_H_

#include <stdint.h>

#include "tvmk_fused.h"
#include "tvmk_s8.h"
#include "tvmk_s16.h"
#include "tvmk_s8_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

int32_t tvmk_cmsis_nn_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                                const struct tvmk_conv2d_s8_params *params,
                                void *resource_handle);
/* conv2d_add: the convolution through arm_convolve_wrapper_s8 a tile of output rows at a
 * time into the scratch, then arm_elementwise_add_s8 of the tile and the residual. */
int32_t tvmk_cmsis_nn_conv2d_add_s8(const int8_t *X, const int8_t *W, const int8_t *R,
                                    const int32_t *B, int8_t *Y,
                                    const struct tvmk_conv2d_add_s8_params *params,
                                    void *resource_handle);
int32_t tvmk_cmsis_nn_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                          const int32_t *bias, int8_t *output,
                                          const struct tvmk_depthwise_conv2d_s8_params *params,
                                          void *resource_handle);
int32_t tvmk_cmsis_nn_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                         const int32_t *bias, int8_t *output,
                                         const struct tvmk_fully_connected_s8_params *params,
                                         void *resource_handle);
int32_t tvmk_cmsis_nn_avgpool2d_s8(const int8_t *X, int8_t *Y,
                                   const struct tvmk_pool2d_s8_params *params,
                                   void *resource_handle);
int32_t tvmk_cmsis_nn_maxpool2d_s8(const int8_t *X, int8_t *Y,
                                   const struct tvmk_pool2d_s8_params *params,
                                   void *resource_handle);
int32_t tvmk_cmsis_nn_pad_s8(const int8_t *data, int8_t *output,
                             const struct tvmk_pad_s8_params *params, void *resource_handle);
int32_t tvmk_cmsis_nn_softmax_s8(const int8_t *input, int8_t *output,
                                 const struct tvmk_softmax_s8_params *params,
                                 void *resource_handle);
int32_t tvmk_cmsis_nn_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                             const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_cmsis_nn_mul_s8(const int8_t *A, const int8_t *B, int8_t *C,
                             const struct tvmk_mul_s8_params *params, void *resource_handle);
/* int16 (16x8): s16.c. */
int32_t tvmk_cmsis_nn_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B,
                                 int16_t *Y, const struct tvmk_conv2d_s8_params *params,
                                 void *resource_handle);
int32_t tvmk_cmsis_nn_conv2d_s16_b32(const int16_t *X, const int8_t *W, const int32_t *B,
                                     int16_t *Y, const struct tvmk_conv2d_s8_params *params,
                                     void *resource_handle);
int32_t tvmk_cmsis_nn_depthwise_conv2d_s16(const int16_t *input, const int8_t *filter,
                                           const int64_t *bias, int16_t *output,
                                           const struct tvmk_depthwise_conv2d_s8_params *params,
                                           void *resource_handle);
int32_t tvmk_cmsis_nn_fully_connected_s16(const int16_t *input, const int8_t *weights,
                                          const int64_t *bias, int16_t *output,
                                          const struct tvmk_fully_connected_s8_params *params,
                                          void *resource_handle);
int32_t tvmk_cmsis_nn_add_s16(const int16_t *A, const int16_t *B, int16_t *C,
                              const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_cmsis_nn_mul_s16(const int16_t *A, const int16_t *B, int16_t *C,
                              const struct tvmk_mul_s8_params *params, void *resource_handle);
int32_t tvmk_cmsis_nn_avgpool2d_s16(const int16_t *X, int16_t *Y,
                                    const struct tvmk_pool2d_s8_params *params,
                                    void *resource_handle);
int32_t tvmk_cmsis_nn_maxpool2d_s16(const int16_t *X, int16_t *Y,
                                    const struct tvmk_pool2d_s8_params *params,
                                    void *resource_handle);
int32_t tvmk_cmsis_nn_softmax_s16(const int16_t *input, int16_t *output,
                                  const struct tvmk_softmax_s16_params *params,
                                  void *resource_handle);
int32_t tvmk_cmsis_nn_softmax_s8_s16(const int8_t *input, int16_t *output,
                                     const struct tvmk_softmax_s16_params *params,
                                     void *resource_handle);
int32_t tvmk_cmsis_nn_sigmoid_s16(const int16_t *X, int16_t *Y,
                                  const struct tvmk_sigmoid_s16_params *params,
                                  void *resource_handle);
int32_t tvmk_cmsis_nn_tanh_s16(const int16_t *input, int16_t *output,
                               const struct tvmk_sigmoid_s16_params *params,
                               void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_CMSIS_NN_H_ */
