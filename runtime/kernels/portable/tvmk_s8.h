/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8 (TFLite's quantization spec), computed exactly as TFLM's
 * reference kernels compute them: quantize, dequantize, reshape, fully_connected,
 * conv2d and depthwise_conv2d (per channel).
 *
 * The calling convention is tvmk_portable.h's, with each tensor's C type its dtype's:
 * int8_t for activations and weights, int32_t for biases, float for the float side of
 * quantize and dequantize. Every quantization parameter is derived at generation time
 * (tvmdev/model/s8, as TFLM's Prepare derives it) into the const params struct:
 * offsets (minus the input's zero point, the output's zero point), the requantization
 * multiplier and shift of input_scale * weight_scale / output_scale (per output channel
 * as static const arrays for per-channel weights), and the fused activation's range
 * clamped to [-128, 127]. Requantization is tvmk_fixedpoint.h's.
 *
 * The params of fully_connected, conv2d and depthwise_conv2d (and of the pools in
 * tvmk_s8_ops.h) end with scratch_bytes and scratch (tvmk_portable.h): the portable
 * kernels need none (0 and NULL); a board library's kernel of the op (cmsis_nn) gets the
 * buffer its library asks for.
 */
#ifndef TVMK_S8_H_
#define TVMK_S8_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* quantize: output = clamp(round(input / scale) + zero_point, -128, 127), the division in
 * float, halves rounded away from zero, NaN to -128; of int8 (requantize): output =
 * clamp(MultiplyByQuantizedMultiplier(input - input_zero_point, multiplier, shift) +
 * zero_point); dequantize: output = (input - zero_point) * scale. count elements; the
 * scale and zero point are the int8 side's (the output's for a requantization). */
struct tvmk_quantize_s8_params {
    int32_t count;
    float scale;
    int32_t zero_point;
    int32_t input_zero_point, multiplier, shift;
};

/* fully_connected: batch rows of in_size int8 values times out_size rows of weights:
 * acc = sum((w + weights_offset) * (x + input_offset)) + bias (int32), then
 * requantized by output_multiplier and output_shift (weights per tensor), or by
 * channel_multiplier[o] and channel_shift[o] when those arrays are given (weights per
 * output channel), plus output_offset, clamped to [activation_min, activation_max].
 * kernel_sums: for constant weights where CMSIS-NN's Helium kernel takes them (cmsis_nn),
 * each output row's bias + input_offset * (sum of its weights + in_size * weights_offset),
 * computed at generation time (what arm_vector_sum_s8 computes); NULL otherwise, and the
 * portable kernel ignores it. */
struct tvmk_fully_connected_s8_params {
    int32_t batch, in_size, out_size;
    int32_t input_offset, weights_offset, output_offset;
    int32_t output_multiplier, output_shift;
    int32_t activation_min, activation_max;
    const int32_t *channel_multiplier;
    const int32_t *channel_shift;
    const int32_t *kernel_sums;
    int32_t scratch_bytes;
    void *scratch;
};

/* conv2d, NHWC: X is N x H x W x C, W is M x KH x KW x (C / group) (OHWI), B (optional,
 * int32) M, Y N x OH x OW x M; output channel m of group m / (M / group) reads that
 * group's input channels. acc = sum(w * (x + input_offset)) over the window's positions
 * inside the input (padding adds nothing) + bias, requantized by output channel m's
 * multiplier and shift (arrays of M), plus output_offset, clamped. packed_weights and
 * folded_bias: the filter laid out and the bias folded at generation time where tvmdev's
 * own Cortex-M kernel takes the operator (tvmdev_cm, tvmk_cm.h); NULL otherwise, and the
 * portable kernel ignores them. */
struct tvmk_conv2d_s8_params {
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
    const int32_t *packed_weights;
    const int32_t *folded_bias;
    int32_t scratch_bytes;
    void *scratch;
};

/* depthwise_conv2d, NHWC: X is N x H x W x C, W is 1 x KH x KW x (C * mult), B (optional,
 * int32) C * mult; output channel c * mult + j reads input channel c; otherwise as
 * conv2d (multipliers and shifts: arrays of C * mult). */
struct tvmk_depthwise_conv2d_s8_params {
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
    int32_t scratch_bytes;
    void *scratch;
};

int32_t tvmk_quantize_s8(const float *input, int8_t *output,
                         const struct tvmk_quantize_s8_params *params, void *resource_handle);
int32_t tvmk_requantize_s8(const int8_t *input, int8_t *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle);
int32_t tvmk_dequantize_s8(const int8_t *input, float *output,
                           const struct tvmk_quantize_s8_params *params,
                           void *resource_handle);
int32_t tvmk_reshape_s8(const int8_t *data, int8_t *reshaped,
                        const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                const int32_t *bias, int8_t *output,
                                const struct tvmk_fully_connected_s8_params *params,
                                void *resource_handle);
int32_t tvmk_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                       const struct tvmk_conv2d_s8_params *params, void *resource_handle);
/* TRANSPOSE_CONV, NHWC, W [M, KH, KW, C / group]: tvmk_conv2d_s8_params read as the
 * transposed convolution's (pad_top / pad_left: where input pixel 0 lands before the
 * output; input row iy and filter row ky reach output row iy * stride_h - pad_top +
 * ky * dil_h). */
int32_t tvmk_transpose_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                                 const struct tvmk_conv2d_s8_params *params,
                                 void *resource_handle);
int32_t tvmk_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                 const int32_t *bias, int8_t *output,
                                 const struct tvmk_depthwise_conv2d_s8_params *params,
                                 void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_S8_H_ */
