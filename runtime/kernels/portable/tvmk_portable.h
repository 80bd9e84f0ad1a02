/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernel library: C99, no dynamic allocation, libm only for exp/tanh.
 *
 * Calling convention (the same for every kernel a registry names):
 *   int32_t kernel(<inputs, in ONNX order, const float *>,
 *                  <outputs, float *>,
 *                  const struct tvmk_<op>_params *params,
 *                  void *resource_handle);
 * An optional input that is absent (gemm's C, conv2d's B) is passed as NULL. Shapes and
 * attributes are resolved at generation time into the const params struct. Kernels return
 * TVM_DEVICE_OK, or TVM_DEVICE_DECLINED when they cannot serve a call (the executor then
 * falls back to the next kernel registered for the operator). resource_handle is the
 * device the operator is bound to (NULL on the host); portable kernels ignore it.
 *
 * Scratch: the params of gemm, matmul and depthwise_conv2d end with scratch_bytes and
 * scratch, memory the call may use as it likes (aligned for float at least; NULL and 0
 * when it has none).
 * tvmdev's memory planner sizes it per call at generation time, for the kernels of the
 * operator's chain (kernels.yaml: scratch), and gives it an arena offset live only
 * during that operator (aligned to 16); the executor points it into the workspace the
 * run was given. Kernels need no stack beyond a few small locals.
 *
 * Elementwise kernels (unary, binary with an operand of the output's shape, copy) accept
 * an output that aliases that input: the memory planner computes them in place.
 */
#ifndef TVMK_PORTABLE_H_
#define TVMK_PORTABLE_H_

#include <stdint.h>

#include "tvm/device/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TVMK_MAX_DIMS 6

/* Fused activations (params field activation), applied to each output in the same call:
 * TFLite's fused_activation_function. */
#define TVMK_ACT_NONE 0
#define TVMK_ACT_RELU 1          /* max(x, 0) */
#define TVMK_ACT_RELU6 2         /* min(max(x, 0), 6) */
#define TVMK_ACT_RELU_N1_TO_1 3  /* min(max(x, -1), 1) */
#define TVMK_ACT_TANH 4          /* tanh(x) */

/* Layouts of 4-D activations (params field layout). */
#define TVMK_LAYOUT_NCHW 0
#define TVMK_LAYOUT_NHWC 1

/* Y = alpha * op(A) @ op(B) + beta * C; op() transposes when trans_a / trans_b is set.
 * A is M x K (K x M when trans_a), B is K x N (N x K when trans_b), Y is M x N.
 * C (optional) is read at C[m * c_stride_m + n * c_stride_n]: strides of 0 broadcast.
 * b_constant is set when B is a model constant, so an accelerator may pack it once.
 * scratch_bytes / scratch: the call's scratch (see above). */
struct tvmk_gemm_params {
    int32_t M, N, K;
    int32_t trans_a, trans_b;
    float alpha, beta;
    int32_t c_stride_m, c_stride_n;
    int32_t b_constant;
    int32_t scratch_bytes;
    void *scratch;
};

/* A float32 weight quantised to 4 bits in blocks (tvmdev/quant.py): N rows of K values,
 * value k of row n in data[n * K / 2 + k / 2] (even k in the low nibble) as q + 8, and
 * the bfloat16 scale of its block in scales[n * (K / block) + k / block]; the value is
 * (q - 8) * scale. A gemm's B of this kind is stored N x K whatever transB says. */
struct tvmk_q4c32 {
    int32_t n, k, block;
    const uint8_t *data;
    const uint16_t *scales;
};

/* Batched Y[i] = A[i] @ B[i] with numpy's batch broadcasting: A[i] is M x K, B[i] K x N,
 * Y[i] M x N, for every index i of the batch shape shape[0..ndim) (batch is the product of
 * its dims; 1 and ndim 0 for one product). Y's matrices are contiguous in row-major order
 * of i; A[i] starts at sum over d of i[d] * a_strides[d] elements, where a stride is 0
 * along a dim A broadcasts (a dim it lacks or has of size 1), likewise B.
 * scratch_bytes / scratch: the call's scratch, which each product reuses. */
#define TVMK_MAX_BATCH_DIMS (TVMK_MAX_DIMS - 2)
struct tvmk_matmul_params {
    int32_t batch, M, N, K;
    int32_t ndim;
    int32_t shape[TVMK_MAX_BATCH_DIMS];
    int32_t a_strides[TVMK_MAX_BATCH_DIMS];
    int32_t b_strides[TVMK_MAX_BATCH_DIMS];
    int32_t b_constant;
    int32_t scratch_bytes;
    void *scratch;
};

/* Elementwise C = act(A op B) with numpy broadcasting. The output has ndim dims of the
 * given shape and count elements; a_strides / b_strides give each operand's stride (in
 * elements) along each output dim, 0 where it broadcasts. activation: TVMK_ACT_*. */
struct tvmk_binary_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t a_strides[TVMK_MAX_DIMS];
    int32_t b_strides[TVMK_MAX_DIMS];
    int32_t activation;
};

/* Elementwise unary ops, and reshape/flatten (a copy, skipped when in place). */
struct tvmk_unary_params {
    int32_t count;
};

/* Y = X where X > 0, else alpha * X, over count elements (leaky_relu); Y may alias X. */
struct tvmk_leaky_relu_params {
    int32_t count;
    float alpha;
};

/* Softmax (and log_softmax) over an axis: the input viewed as outer x axis x inner. */
struct tvmk_softmax_params {
    int32_t outer, axis, inner;
};

/* Y[i0..] = X[...] with Y of ndim dims and the given shape; in_strides[d] is the stride
 * in X (in elements) of output dim d. */
struct tvmk_transpose_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t in_strides[TVMK_MAX_DIMS];
};

/* A strided slice (TFLite's STRIDED_SLICE and SPLIT, ONNX's Slice): Y[i0..] =
 * X[offset + sum(i_d * in_strides[d])], Y of ndim dims and the given shape (count
 * elements; in_strides in elements, negative for a backward step). The kernels copy
 * elements of any type alike (int8 keeps its values, as TFLM). Not in place. */
struct tvmk_strided_slice_params {
    int32_t ndim, count, offset;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t in_strides[TVMK_MAX_DIMS];
};

/* TFLite's RESIZE_NEAREST_NEIGHBOR: X is N x H x W x C, Y is N x OH x OW x C; output pixel
 * (y, x) copies input pixel (nearest(y, H, scale_h), nearest(x, W, scale_w)), nearest
 * computed in float as TFLM computes it: (v + 0.5 if half_pixel_centers) * scale, floored
 * (rounded, halves away from zero, if align_corners), at most size - 1 (and at least 0 if
 * half_pixel_centers). scale: in / out, or (in - 1) / (out - 1) if align_corners and
 * out > 1, as a float. rounding TVMK_ROUND_FLOOR / TVMK_ROUND_CEIL (ONNX's nearest modes)
 * takes the floor or ceiling of (v + 0.5 if half_pixel_centers) * scale + offset
 * instead, clamped to [0, size - 1]. */
#define TVMK_ROUND_TFLM 0
#define TVMK_ROUND_FLOOR 1
#define TVMK_ROUND_CEIL 2
struct tvmk_resize_nearest_params {
    int32_t N, H, W, C, OH, OW;
    float scale_h, scale_w;
    int32_t align_corners, half_pixel_centers;
    int32_t rounding;
    float offset;
};

/* TFLite's RESIZE_BILINEAR: X is N x H x W x C, Y is N x OH x OW x C; each output value
 * interpolates the input's rows floor(p), ceil(p) (clamped to [0, H - 1]) at
 * p = y * scale_h, or (y + 0.5) * scale_h - 0.5 if half_pixel_centers, and likewise its
 * columns, as TFLM's reference kernel computes it: in float (scale_h, scale_w: in / out,
 * or (in - 1) / (out - 1) with align_corners), or for int8 in fixed point with 10
 * fractional bits (scale_h_10, scale_w_10: the same ratios x 1024, rounded). Not in
 * place. */
struct tvmk_resize_bilinear_params {
    int32_t N, H, W, C, OH, OW;
    float scale_h, scale_w;
    int32_t scale_h_10, scale_w_10;
    int32_t half_pixel_centers;
};

/* ONNX's Resize (float32) of X's last two dims, H x W to OH x OW, outer = the product of
 * the dims before them (tvmdev/model/resize_interp.py gives the arithmetic): mode
 * TVMK_RESIZE_NEAREST, _LINEAR or _CUBIC; coord one of TVMK_COORD_*; nearest_mode one of
 * TVMK_NEAREST_*; cubic_a Keys' a; exclude_outside, antialias 0 or 1. scale_h, scale_w
 * are ONNX's scales (output over input); with a scales operand (scales_count values)
 * they are read from it at run time instead, scales[index_h] and scales[index_w], every
 * other scale must be 1 and (int)(scale * H) must be OH (likewise W), else the kernel
 * returns TVM_DEVICE_ERR_INVALID. TVMK_COORD_TF_CROP_AND_RESIZE takes each axis's
 * region of interest [roi_*_start, roi_*_end] (fractions of its length - 1); an output
 * whose position is outside the input on either axis is extrapolation_value. Not in
 * place. */
#define TVMK_RESIZE_NEAREST 0
#define TVMK_RESIZE_LINEAR 1
#define TVMK_RESIZE_CUBIC 2
#define TVMK_COORD_HALF_PIXEL 0
#define TVMK_COORD_PYTORCH_HALF_PIXEL 1
#define TVMK_COORD_ALIGN_CORNERS 2
#define TVMK_COORD_ASYMMETRIC 3
#define TVMK_COORD_TF_HALF_PIXEL_FOR_NN 4
#define TVMK_COORD_HALF_PIXEL_SYMMETRIC 5
#define TVMK_COORD_TF_CROP_AND_RESIZE 6
#define TVMK_NEAREST_ROUND_PREFER_FLOOR 0
#define TVMK_NEAREST_ROUND_PREFER_CEIL 1
#define TVMK_NEAREST_FLOOR 2
#define TVMK_NEAREST_CEIL 3
struct tvmk_resize_params {
    int32_t outer, H, W, OH, OW;
    float scale_h, scale_w;
    int32_t mode, coord, nearest_mode;
    float cubic_a;
    int32_t exclude_outside, antialias;
    int32_t scales_count, index_h, index_w;
    float roi_h_start, roi_h_end, roi_w_start, roi_w_end;
    float extrapolation_value;
};

/* Convolution, Y = act(conv(X, W) + B). With layout TVMK_LAYOUT_NCHW (ONNX): X is
 * N x C x H x W, W is M x (C / group) x KH x KW (OIHW), Y is N x M x OH x OW. With
 * TVMK_LAYOUT_NHWC (TFLite): X is N x H x W x C, W is M x KH x KW x (C / group) (OHWI),
 * Y is N x OH x OW x M. B (optional) is M. Padding pad_top/pad_left is implicit zeros
 * (bottom/right padding is implied by OH/OW). activation: TVMK_ACT_*. */
struct tvmk_conv2d_params {
    int32_t N, C, H, W;
    int32_t M, KH, KW, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t dil_h, dil_w;
    int32_t group;
    int32_t layout;
    int32_t activation;
};

/* Depthwise convolution (TFLite DEPTHWISE_CONV_2D), NHWC: X is N x H x W x C, W is
 * 1 x KH x KW x (C * mult), B (optional) is C * mult, Y is N x OH x OW x (C * mult);
 * output channel c * mult + j reads input channel c. activation: TVMK_ACT_*. Y may start
 * at X's address (in place: the scratch then holds a ring of X's rows, inplace_rows.h). */
struct tvmk_depthwise_conv2d_params {
    int32_t N, C, H, W;
    int32_t KH, KW;
    int32_t mult, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t dil_h, dil_w;
    int32_t activation;
    int32_t scratch_bytes;
    void *scratch;
};

/* Pooling: X is N x C x H x W and Y N x C x OH x OW (TVMK_LAYOUT_NCHW), or X is
 * N x H x W x C and Y N x OH x OW x C (TVMK_LAYOUT_NHWC). Max pooling ignores padded
 * positions; average pooling divides by the window's size if count_include_pad, else
 * by the number of positions inside the input. */
struct tvmk_pool2d_params {
    int32_t N, C, H, W;
    int32_t KH, KW, OH, OW;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t pad_bottom, pad_right;
    int32_t dil_h, dil_w;
    int32_t count_include_pad;
    int32_t layout;
};

/* TFLite FULLY_CONNECTED: output[b][o] = act(sum over i of input[b][i] * weights[o][i]
 * + bias[o]) for b < batch, o < out_size; bias (optional) is out_size. weights_constant:
 * the weights are a constant of the model (an accelerator may pack them once). */
struct tvmk_fully_connected_params {
    int32_t batch, in_size, out_size;
    int32_t activation;
    int32_t weights_constant;
};

/* Y = min(max(X, min), max) over count elements (clip, relu6); Y may alias X. */
struct tvmk_clip_params {
    int32_t count;
    float min, max;
};

/* Constant padding: the output (ndim dims of out_shape, count elements) holds the input
 * (in_shape) at offset begin[d] along each dim d, and value elsewhere. */
struct tvmk_pad_params {
    int32_t ndim, count;
    int32_t out_shape[TVMK_MAX_DIMS];
    int32_t in_shape[TVMK_MAX_DIMS];
    int32_t begin[TVMK_MAX_DIMS];
    float value;
};

/* Mean over some dims (mean, global_average_pool): the input has ndim dims of the given
 * shape and count elements; out_strides[d] is the stride in the output (of out_count
 * elements) of input dim d, 0 for a reduced dim; reduced is the number of input elements
 * averaged into each output. */
struct tvmk_mean_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t out_strides[TVMK_MAX_DIMS];
    int32_t out_count, reduced;
};

/* Elementwise math (sqrt, exp, log, neg, abs, erf: tvmk_unary_params) and GELU:
 * Y = X * (1 + erf(X / sqrt(2))) / 2 over count elements, or with approximate 1 ONNX's
 * tanh form, X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3))) / 2. Y may alias X.
 * pow takes tvmk_binary_params (activation TVMK_ACT_NONE only); clip_bounds takes
 * tvmk_unary_params and reads its bounds from its min and max inputs (one value each,
 * NULL when absent). The reductions (reduce_max, reduce_min, reduce_sum, reduce_prod)
 * take tvmk_mean_params and ignore its reduced field. */
struct tvmk_gelu_params {
    int32_t count;
    int32_t approximate;
};

/* Gather along an axis: data viewed as outer x axis_size x inner, indices as count int32
 * values in [-axis_size, axis_size) (negative ones count from the end), the output as
 * outer x count x inner: output[o][j] = data[o][indices[j]]. */
struct tvmk_gather_params {
    int32_t outer, axis_size, inner, count;
};

/* Layer normalization: X viewed as outer rows of inner values, each row normalized to
 * (x - mean) / sqrt(var + epsilon), then times Scale and plus B (optional), read at
 * element i * scale_stride (bias_stride) of the row: stride 1 for a value per element,
 * 0 for one value. Y may alias X. */
struct tvmk_layer_norm_params {
    int32_t outer, inner;
    float epsilon;
    int32_t scale_stride, bias_stride;
};

/* LayerNormalization's InvStdDev: for each of outer rows of inner values,
 * 1 / sqrt(var + epsilon) (var the row's mean squared deviation). */
struct tvmk_inv_std_dev_params {
    int32_t outer, inner;
    float epsilon;
};

/* Concatenation along an axis: the output viewed as outer x (the inputs' blocks, in
 * order); input i contributes blocks[i] contiguous values (its axis dim times the
 * product of the dims after the axis) per outer index. ninputs <= TVMK_CONCAT_MAX_INPUTS. */
#define TVMK_CONCAT_MAX_INPUTS 16
struct tvmk_concat_params {
    int32_t ninputs, outer;
    int32_t blocks[TVMK_CONCAT_MAX_INPUTS];
};

int32_t tvmk_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                      const struct tvmk_gemm_params *params, void *resource_handle);
/* The scratch tvmk_gemm_f32 (and tvmk_matmul_f32, per batch) packs all of op(B) with in
 * one block: sizeof(float) * (MR * NR + MR * KC' + ceil(N / NR) * NR * KC'), KC' being
 * min(KC, K). Less is slower, never different: the kernel packs as many NR-column strips
 * of B as fit, and computes each element directly with room for none. */
int32_t tvmk_gemm_scratch_bytes(int32_t M, int32_t N, int32_t K);
int32_t tvmk_gemm_q4c32_f32(const float *A, const struct tvmk_q4c32 *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle);
int32_t tvmk_matmul_f32(const float *A, const float *B, float *Y,
                        const struct tvmk_matmul_params *params, void *resource_handle);
int32_t tvmk_add_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_mul_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_sub_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_maximum_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_minimum_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_div_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_relu_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                      void *resource_handle);
int32_t tvmk_sigmoid_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                         void *resource_handle);
int32_t tvmk_tanh_f32(const float *input, float *output,
                      const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_softmax_f32(const float *input, float *output,
                         const struct tvmk_softmax_params *params, void *resource_handle);
int32_t tvmk_leaky_relu_f32(const float *X, float *Y, const struct tvmk_leaky_relu_params *params,
                            void *resource_handle);
int32_t tvmk_hard_swish_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                            void *resource_handle);
int32_t tvmk_log_softmax_f32(const float *input, float *output,
                             const struct tvmk_softmax_params *params, void *resource_handle);
int32_t tvmk_reshape_f32(const float *data, float *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_flatten_f32(const float *input, float *output,
                         const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_transpose_f32(const float *data, float *transposed,
                           const struct tvmk_transpose_params *params, void *resource_handle);
int32_t tvmk_strided_slice_f32(const float *input, float *output,
                               const struct tvmk_strided_slice_params *params,
                               void *resource_handle);
int32_t tvmk_resize_nearest_f32(const float *X, float *Y,
                                const struct tvmk_resize_nearest_params *params,
                                void *resource_handle);
int32_t tvmk_resize_bilinear_f32(const float *X, float *Y,
                                 const struct tvmk_resize_bilinear_params *params,
                                 void *resource_handle);
int32_t tvmk_resize_f32(const float *X, const float *scales, float *Y,
                        const struct tvmk_resize_params *params, void *resource_handle);
int32_t tvmk_conv2d_f32(const float *X, const float *W, const float *B, float *Y,
                        const struct tvmk_conv2d_params *params, void *resource_handle);
/* Transposed convolution: tvmk_conv2d_params read as the transposed one's (pad_top /
 * pad_left: where input pixel 0 lands before the output; input row iy and filter row ky
 * reach output row iy * stride_h - pad_top + ky * dil_h); W is ONNX's [C, M / group, KH, KW]
 * (NCHW) or TFLite's [M, KH, KW, C / group] (NHWC). */
int32_t tvmk_transpose_conv2d_f32(const float *X, const float *W, const float *B, float *Y,
                                  const struct tvmk_conv2d_params *params,
                                  void *resource_handle);
int32_t tvmk_depthwise_conv2d_f32(const float *input, const float *filter, const float *bias,
                                  float *output,
                                  const struct tvmk_depthwise_conv2d_params *params,
                                  void *resource_handle);
int32_t tvmk_maxpool2d_f32(const float *X, float *Y, const struct tvmk_pool2d_params *params,
                           void *resource_handle);
int32_t tvmk_avgpool2d_f32(const float *X, float *Y, const struct tvmk_pool2d_params *params,
                           void *resource_handle);
int32_t tvmk_fully_connected_f32(const float *input, const float *weights, const float *bias,
                                 float *output, const struct tvmk_fully_connected_params *params,
                                 void *resource_handle);
int32_t tvmk_clip_f32(const float *input, float *output, const struct tvmk_clip_params *params,
                      void *resource_handle);
int32_t tvmk_pad_f32(const float *data, float *output, const struct tvmk_pad_params *params,
                     void *resource_handle);
int32_t tvmk_mean_f32(const float *data, float *reduced, const struct tvmk_mean_params *params,
                      void *resource_handle);
int32_t tvmk_sqrt_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                      void *resource_handle);
int32_t tvmk_exp_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle);
int32_t tvmk_log_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle);
int32_t tvmk_neg_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle);
int32_t tvmk_abs_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle);
int32_t tvmk_erf_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle);
int32_t tvmk_gelu_f32(const float *X, float *Y, const struct tvmk_gelu_params *params,
                      void *resource_handle);
int32_t tvmk_pow_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle);
int32_t tvmk_clip_bounds_f32(const float *input, const float *min, const float *max,
                             float *output, const struct tvmk_unary_params *params,
                             void *resource_handle);
int32_t tvmk_reduce_max_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle);
int32_t tvmk_reduce_min_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle);
int32_t tvmk_reduce_sum_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle);
int32_t tvmk_reduce_prod_f32(const float *data, float *reduced,
                             const struct tvmk_mean_params *params, void *resource_handle);
int32_t tvmk_gather_f32(const float *data, const int32_t *indices, float *output,
                        const struct tvmk_gather_params *params, void *resource_handle);
int32_t tvmk_layer_norm_f32(const float *X, const float *Scale, const float *B, float *Y,
                            const struct tvmk_layer_norm_params *params,
                            void *resource_handle);
int32_t tvmk_inv_std_dev_f32(const float *X, float *Y,
                             const struct tvmk_inv_std_dev_params *params,
                             void *resource_handle);
int32_t tvmk_concat_f32(const float *const *inputs, float *concat_result,
                        const struct tvmk_concat_params *params, void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_PORTABLE_H_ */
