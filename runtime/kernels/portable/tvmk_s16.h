/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16 (TFLite's 16x8 scheme: int16 activations, int8 weights,
 * int64 biases), computed exactly as TFLM's reference kernels compute them. Each kernel
 * takes the params struct of the op's int8 form (tvmk_s8.h, tvmk_s8_ops.h; derived at
 * generation time by tvmdev/model/s16): the arithmetic is the int8 form's with int16
 * clamps (add, sub, mul, pad, leaky_relu, quantize), or with int64 accumulators and the
 * int64 MultiplyByQuantizedMultiplier (conv2d, depthwise_conv2d, fully_connected; their
 * activation range is int16's). ADD and SUB's left_shift is 15 (int8's 20).
 */
#ifndef TVMK_S16_H_
#define TVMK_S16_H_

#include <stdint.h>

#include "tvmk_s8.h"
#include "tvmk_s8_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SOFTMAX into int16 over the last axis (outer x depth). Of int8 (exp_lut NULL): the int8
 * algorithm (tvmk_softmax_s8_params' fields), the output 1/65536, -32768. Of int16: TFLM's
 * SoftmaxInt16, a difference from the row's maximum scaled by input_multiplier and
 * input_left_shift (MultiplyByQuantizedMultiplier) into [-65535, 0] for [-10, 0], exp and
 * the sum's reciprocal from 513-entry interpolated tables (exp_lut,
 * one_over_one_plus_x_lut), the output 1/32768, 0. */
struct tvmk_softmax_s16_params {
    int32_t outer, depth;
    int32_t input_multiplier, input_left_shift;
    int32_t diff_min;
    const int16_t *exp_lut;
    const int16_t *one_over_one_plus_x_lut;
};

/* LOGISTIC and TANH of int16 (TFLM's, Q0.15 out): each input times input_multiplier,
 * rounded right by input_left_shift (input_multiplier 0: times 3 << input_left_shift, as
 * TFLM's power-of-two case), interpolated in sigmoid_table (TFLM's 256 entries of
 * sigmoid(i / 24) in Q0.16, from its or CMSIS-NN's tree); tanh is 2 sigmoid(2x) - 1. */
struct tvmk_sigmoid_s16_params {
    int32_t count;
    int32_t input_multiplier, input_left_shift;
    const uint16_t *sigmoid_table;
};

/* quantize float32 -> int16; requantize between int8, int16 and int32 (input -> output:
 * clamp(MultiplyByQuantizedMultiplier(input - input_zero_point) + zero_point) to the
 * output's dtype); dequantize int16 -> float32. */
int32_t tvmk_quantize_s16(const float *input, int16_t *output,
                          const struct tvmk_quantize_s8_params *params, void *resource_handle);
int32_t tvmk_requantize_s16_s8(const int16_t *input, int8_t *output,
                               const struct tvmk_quantize_s8_params *params,
                               void *resource_handle);
int32_t tvmk_requantize_s8_s16(const int8_t *input, int16_t *output,
                               const struct tvmk_quantize_s8_params *params,
                               void *resource_handle);
int32_t tvmk_requantize_s16(const int16_t *input, int16_t *output,
                            const struct tvmk_quantize_s8_params *params,
                            void *resource_handle);
int32_t tvmk_requantize_s16_s32(const int16_t *input, int32_t *output,
                                const struct tvmk_quantize_s8_params *params,
                                void *resource_handle);
int32_t tvmk_requantize_s32_s16(const int32_t *input, int16_t *output,
                                const struct tvmk_quantize_s8_params *params,
                                void *resource_handle);
int32_t tvmk_dequantize_s16(const int16_t *input, float *output,
                            const struct tvmk_quantize_s8_params *params,
                            void *resource_handle);
int32_t tvmk_reshape_s16(const int16_t *data, int16_t *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_transpose_s16(const int16_t *data, int16_t *transposed,
                           const struct tvmk_transpose_params *params, void *resource_handle);
int32_t tvmk_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B, int16_t *Y,
                        const struct tvmk_conv2d_s8_params *params, void *resource_handle);
int32_t tvmk_conv2d_s16_b32(const int16_t *X, const int8_t *W, const int32_t *B, int16_t *Y,
                            const struct tvmk_conv2d_s8_params *params, void *resource_handle);
int32_t tvmk_transpose_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B,
                                  int16_t *Y, const struct tvmk_conv2d_s8_params *params,
                                  void *resource_handle);
int32_t tvmk_depthwise_conv2d_s16(const int16_t *input, const int8_t *filter,
                                  const int64_t *bias, int16_t *output,
                                  const struct tvmk_depthwise_conv2d_s8_params *params,
                                  void *resource_handle);
int32_t tvmk_fully_connected_s16(const int16_t *input, const int8_t *weights,
                                 const int64_t *bias, int16_t *output,
                                 const struct tvmk_fully_connected_s8_params *params,
                                 void *resource_handle);
int32_t tvmk_fully_connected_s16_b32(const int16_t *input, const int8_t *weights,
                                     const int32_t *bias, int16_t *output,
                                     const struct tvmk_fully_connected_s8_params *params,
                                     void *resource_handle);
int32_t tvmk_add_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_sub_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_mul_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_mul_s8_params *params, void *resource_handle);
int32_t tvmk_maximum_s16(const int16_t *A, const int16_t *B, int16_t *C,
                         const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_minimum_s16(const int16_t *A, const int16_t *B, int16_t *C,
                         const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_pad_s16(const int16_t *data, int16_t *output,
                     const struct tvmk_pad_s8_params *params, void *resource_handle);
int32_t tvmk_softmax_s8_s16(const int8_t *input, int16_t *output,
                            const struct tvmk_softmax_s16_params *params, void *resource_handle);
int32_t tvmk_softmax_s16(const int16_t *input, int16_t *output,
                         const struct tvmk_softmax_s16_params *params, void *resource_handle);
int32_t tvmk_avgpool2d_s16(const int16_t *X, int16_t *Y,
                           const struct tvmk_pool2d_s8_params *params, void *resource_handle);
int32_t tvmk_maxpool2d_s16(const int16_t *X, int16_t *Y,
                           const struct tvmk_pool2d_s8_params *params, void *resource_handle);
int32_t tvmk_concat_s16(const int16_t *const *inputs, int16_t *concat_result,
                        const struct tvmk_concat_s8_params *params, void *resource_handle);
int32_t tvmk_leaky_relu_s16(const int16_t *X, int16_t *Y,
                            const struct tvmk_leaky_relu_s8_params *params,
                            void *resource_handle);
int32_t tvmk_sigmoid_s16(const int16_t *X, int16_t *Y,
                         const struct tvmk_sigmoid_s16_params *params, void *resource_handle);
int32_t tvmk_tanh_s16(const int16_t *input, int16_t *output,
                      const struct tvmk_sigmoid_s16_params *params, void *resource_handle);
int32_t tvmk_mean_s16(const int16_t *data, int16_t *reduced,
                      const struct tvmk_mean_s8_params *params, void *resource_handle);
int32_t tvmk_resize_nearest_s16(const int16_t *X, int16_t *Y,
                                const struct tvmk_resize_nearest_params *params,
                                void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_S16_H_ */
