/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8 (TFLite's quantization spec), bit-exact with TFLM's
 * reference kernels: ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX, LOGISTIC, TANH, PAD
 * (and PADV2), MEAN, CONCATENATION, TRANSPOSE, LEAKY_RELU, HARD_SWISH, LOG_SOFTMAX,
 * RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, STRIDED_SLICE, SPLIT, SPLIT_V. C99, no allocation, no scratch, a few locals.
 *
 * The calling convention is the float kernels' (tvmk_portable.h): inputs, outputs, the
 * const params struct, the resource handle (ignored); TVM_DEVICE_OK, or
 * TVM_DEVICE_ERR_INVALID for params a kernel cannot serve. Every quantization constant
 * is derived at generation time, as TFLM's Prepare derives it, by tvmdev/model/s8/<op>.py
 * (params()), whose numpy reference (reference()) computes the same integer arithmetic.
 *
 * Requantization constants are TFLite's: a multiplier in [2^30, 2^31) (or 0) and a shift,
 * the real factor being multiplier * 2^(shift - 31) (tvmk_fixedpoint.h:
 * tvmk_multiply_by_quantized_multiplier). An "offset" is added to a raw int8 value: the
 * negated zero point of an input, or the zero point of an output. act_min / act_max are
 * the int8 clamp of the fused activation (TFLite's CalculateActivationRangeQuantized;
 * -128 / 127 for none).
 *
 * Elementwise kernels (add, mul, sigmoid, tanh, leaky_relu, hard_swish) and the
 * softmaxes accept an output that aliases an input of the output's shape (each element
 * is written after it is read).
 */
#ifndef TVMK_S8_OPS_H_
#define TVMK_S8_OPS_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ADD: out = clamp(out_offset + MBQM(MBQM((a + a_offset) << left_shift, a_multiplier,
 * a_shift) + MBQM((b + b_offset) << left_shift, b_multiplier, b_shift), out_multiplier,
 * out_shift), act_min, act_max), MBQM being MultiplyByQuantizedMultiplier.
 * Broadcasting as tvmk_binary_params: the output has ndim dims of shape (count elements);
 * a_strides / b_strides are each input's stride (in elements) along each output dim, 0
 * where it broadcasts.
 * a_offset, b_offset: -zero point of A, B. left_shift: 20 (TFLM's, for int8).
 * a_multiplier/a_shift, b_multiplier/b_shift: scale_A / (2 max(scale_A, scale_B)), and B's.
 * out_multiplier/out_shift: 2 max(scale_A, scale_B) / (2^left_shift scale_out).
 * out_offset: the output zero point. */
struct tvmk_add_s8_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t a_strides[TVMK_MAX_DIMS];
    int32_t b_strides[TVMK_MAX_DIMS];
    int32_t a_offset, b_offset;
    int32_t left_shift;
    int32_t a_multiplier, a_shift;
    int32_t b_multiplier, b_shift;
    int32_t out_multiplier, out_shift;
    int32_t out_offset;
    int32_t act_min, act_max;
};

/* MUL: out = clamp(out_offset + MBQM((a + a_offset) * (b + b_offset), out_multiplier,
 * out_shift), act_min, act_max); out_multiplier/out_shift: scale_A scale_B / scale_out.
 * Shapes and offsets as tvmk_add_s8_params. */
struct tvmk_mul_s8_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t a_strides[TVMK_MAX_DIMS];
    int32_t b_strides[TVMK_MAX_DIMS];
    int32_t a_offset, b_offset;
    int32_t out_multiplier, out_shift;
    int32_t out_offset;
    int32_t act_min, act_max;
};

/* AVERAGE_POOL_2D / MAX_POOL_2D, NHWC: X is N x H x W x C, Y is N x OH x OW x C; the
 * window of output (oy, ox) starts at input row oy * stride_h - pad_top and column
 * ox * stride_w - pad_left, KH x KW, clipped to the input (padding never counts). The
 * average is the window's sum divided by its count of positions, rounded half away from
 * zero; both clamp to [act_min, act_max]. The input and output share one quantization. */
struct tvmk_pool2d_s8_params {
    int32_t N, H, W, C;
    int32_t KH, KW, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t act_min, act_max;
    int32_t scratch_bytes;
    void *scratch;
};

/* SOFTMAX over the last axis (the input viewed as outer x depth), TFLM's int8 algorithm;
 * the output is quantized 1/256, -128. input_multiplier / input_left_shift scale an
 * input's difference from its row's maximum by beta * scale_in into Q5.26 (shift in
 * [0, 31]); differences below diff_min (<= 0) give -128 and add nothing to the sum. */
struct tvmk_softmax_s8_params {
    int32_t outer, depth;
    int32_t input_multiplier, input_left_shift;
    int32_t diff_min;
};

/* LOGISTIC and TANH, TFLM's int8 algorithms, over count elements: v = x -
 * input_zero_point saturates at or beyond +-input_range_radius; inside, v * multiplier *
 * 2^(input_left_shift - 31) in Q4.27 goes through gemmlowp's fixed-point function. The
 * output steps are 1/256 from -128 (logistic) and 1/128 around 0 (tanh), whatever the
 * output tensor says (as TFLM). */
struct tvmk_sigmoid_s8_params {
    int32_t count;
    int32_t input_zero_point, input_range_radius;
    int32_t input_multiplier, input_left_shift;
};

struct tvmk_tanh_s8_params {
    int32_t count;
    int32_t input_zero_point, input_range_radius;
    int32_t input_multiplier, input_left_shift;
};

/* LEAKY_RELU over count elements: v = x - input_zero_point; out = clamp(output_zero_point
 * + MBQM(v, identity_multiplier, identity_shift)) for v >= 0, else clamp(output_zero_point
 * + MBQM(v, |alpha_multiplier|, alpha_shift), negated when alpha_multiplier < 0); the
 * multipliers are input_scale / output_scale and input_scale * alpha / output_scale. */
struct tvmk_leaky_relu_s8_params {
    int32_t count;
    int32_t input_zero_point, output_zero_point;
    int32_t alpha_multiplier, alpha_shift;
    int32_t identity_multiplier, identity_shift;
};

/* HARD_SWISH over count elements, TFLM's int16 fixed-point algorithm: (x -
 * input_zero_point) * 128 is scaled to the output by output_multiplier (an int16 in Q0.15)
 * and, by reluish_multiplier and 2^reluish_exponent, to x / 3 saturated to [-1, 1] in
 * Q0.15, then moved to [0, 1]; their truncated doubling product is divided by
 * 2^-output_exponent (output_exponent <= 0) and output_zero_point added. */
struct tvmk_hard_swish_s8_params {
    int32_t count;
    int32_t input_zero_point, output_zero_point;
    int32_t reluish_multiplier, reluish_exponent;
    int32_t output_multiplier, output_exponent;
};

/* LOG_SOFTMAX over the last axis (the input viewed as outer x depth), TFLM's int8
 * algorithm; the output is quantized 16/256, 127. input_multiplier / input_left_shift
 * scale a difference from the row's maximum into Q5.26 (differences below diff_min add
 * nothing to the sum of exps); reverse_scaling_divisor / reverse_scaling_right_shift scale
 * back from Q5.26, to find the differences that give -128. */
struct tvmk_log_softmax_s8_params {
    int32_t outer, depth;
    int32_t input_multiplier, input_left_shift;
    int32_t reverse_scaling_divisor, reverse_scaling_right_shift;
    int32_t diff_min;
};

/* PAD / PADV2: the output (ndim dims of out_shape, count elements) holds the input
 * (in_shape) unchanged at offset begin[d] along each dim d, and value (an int8: the
 * output zero point, or PADV2's constant) elsewhere. */
struct tvmk_pad_s8_params {
    int32_t ndim, count;
    int32_t out_shape[TVMK_MAX_DIMS];
    int32_t in_shape[TVMK_MAX_DIMS];
    int32_t begin[TVMK_MAX_DIMS];
    int32_t value;
};

/* MEAN over some dims, TFLM's int8 requantization: the input has ndim dims of shape
 * (count elements); out_strides[d] is input dim d's stride in the output (out_count
 * elements), 0 for a reduced dim; reduced is the size of each reduced group. Each output
 * is clamp(output_zero_point + MBQM(sum - input_zero_point * reduced, multiplier,
 * shift)), multiplier/shift being scale_in / scale_out with 1 / reduced folded in as
 * TFLM folds it (tvmdev/model/s8/mean.py: fold_count). */
struct tvmk_mean_s8_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t out_strides[TVMK_MAX_DIMS];
    int32_t out_count, reduced;
    int32_t input_zero_point;
    int32_t multiplier, shift;
    int32_t output_zero_point;
};

/* CONCATENATION: a copy (every input is quantized as the output, as TFLM requires); the
 * fields are tvmk_concat_params': the output viewed as outer x (the inputs' blocks in
 * order), input i contributing blocks[i] contiguous values per outer index. */
struct tvmk_concat_s8_params {
    int32_t ninputs, outer;
    int32_t blocks[TVMK_CONCAT_MAX_INPUTS];
};

int32_t tvmk_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                    const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_mul_s8(const int8_t *A, const int8_t *B, int8_t *C,
                    const struct tvmk_mul_s8_params *params, void *resource_handle);
int32_t tvmk_sub_s8(const int8_t *A, const int8_t *B, int8_t *C,
                    const struct tvmk_add_s8_params *params, void *resource_handle);
int32_t tvmk_maximum_s8(const int8_t *A, const int8_t *B, int8_t *C,
                        const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_minimum_s8(const int8_t *A, const int8_t *B, int8_t *C,
                        const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_avgpool2d_s8(const int8_t *X, int8_t *Y, const struct tvmk_pool2d_s8_params *params,
                          void *resource_handle);
int32_t tvmk_maxpool2d_s8(const int8_t *X, int8_t *Y, const struct tvmk_pool2d_s8_params *params,
                          void *resource_handle);
int32_t tvmk_softmax_s8(const int8_t *input, int8_t *output,
                        const struct tvmk_softmax_s8_params *params, void *resource_handle);
int32_t tvmk_sigmoid_s8(const int8_t *X, int8_t *Y, const struct tvmk_sigmoid_s8_params *params,
                        void *resource_handle);
int32_t tvmk_tanh_s8(const int8_t *input, int8_t *output,
                     const struct tvmk_tanh_s8_params *params, void *resource_handle);
int32_t tvmk_pad_s8(const int8_t *data, int8_t *output, const struct tvmk_pad_s8_params *params,
                    void *resource_handle);
int32_t tvmk_mean_s8(const int8_t *data, int8_t *reduced,
                     const struct tvmk_mean_s8_params *params, void *resource_handle);
int32_t tvmk_concat_s8(const int8_t *const *inputs, int8_t *concat_result,
                       const struct tvmk_concat_s8_params *params, void *resource_handle);
int32_t tvmk_leaky_relu_s8(const int8_t *X, int8_t *Y,
                           const struct tvmk_leaky_relu_s8_params *params, void *resource_handle);
int32_t tvmk_hard_swish_s8(const int8_t *X, int8_t *Y,
                           const struct tvmk_hard_swish_s8_params *params, void *resource_handle);
int32_t tvmk_log_softmax_s8(const int8_t *input, int8_t *output,
                            const struct tvmk_log_softmax_s8_params *params,
                            void *resource_handle);
/* TRANSPOSE: a copy, with tvmk_transpose_params (tvmk_portable.h). */
int32_t tvmk_transpose_s8(const int8_t *data, int8_t *transposed,
                          const struct tvmk_transpose_params *params, void *resource_handle);
/* STRIDED_SLICE, SPLIT, SPLIT_V: a copy, with tvmk_strided_slice_params (tvmk_portable.h). */
int32_t tvmk_strided_slice_s8(const int8_t *input, int8_t *output,
                              const struct tvmk_strided_slice_params *params,
                              void *resource_handle);
/* RESIZE_NEAREST_NEIGHBOR: a copy, with tvmk_resize_nearest_params (tvmk_portable.h). */
int32_t tvmk_resize_nearest_s8(const int8_t *X, int8_t *Y,
                               const struct tvmk_resize_nearest_params *params,
                               void *resource_handle);
/* RESIZE_BILINEAR: TFLM's integer interpolation, with tvmk_resize_bilinear_params
 * (tvmk_portable.h). */
int32_t tvmk_resize_bilinear_s8(const int8_t *X, int8_t *Y,
                                const struct tvmk_resize_bilinear_params *params,
                                void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_S8_OPS_H_ */
