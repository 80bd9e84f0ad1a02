/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn, int16 (16x8), as TFLM's kernels/cmsis_nn call CMSIS-NN: CONV_2D through
 * arm_convolve_wrapper_s16 (int64 or int32 bias), DEPTHWISE_CONV_2D through
 * arm_depthwise_conv_s16 (no buffer, as TFLM calls it), FULLY_CONNECTED through
 * arm_fully_connected_s16 (weights per tensor), ADD and MUL of operands of the output's
 * shape through arm_elementwise_add_s16 and arm_elementwise_mul_s16, SOFTMAX of int8 into
 * int16 through arm_softmax_s8_s16 and of int16 through arm_softmax_s16 (the tables
 * generation computed), AVERAGE_POOL_2D and MAX_POOL_2D through arm_avgpool_s16 and
 * arm_max_pool_s16 (the int8 glue's, tvmk_cmsis_nn_glue.h), LOGISTIC and TANH through
 * arm_nn_activation_s16 (its own copy of TFLM's sigmoid table, the same 256 values). What
 * these do not compute as TFLM's reference kernels do (zero points they ignore, grouped
 * convolutions, per-channel fully_connected, a broadcast, a softmax row of one, a
 * logistic or tanh input rescale that is not 3 * 2^j) was declined at generation time to
 * the portable kernels.
 */
#include "tvmk_cmsis_nn_glue.h"

/* conv2d through arm_convolve_wrapper_s16, the bias int64 or (bias32) int32. */
static int32_t conv16(const int16_t *X, const int8_t *W, const void *B, int bias32, int16_t *Y,
                      const struct tvmk_conv2d_s8_params *p)
{
    cmsis_nn_context ctx;
    const cmsis_nn_conv_params conv = tvmk_cmsis_nn_conv(p, 0, 0);
    /* the flag is const: set at initialisation, as TFLM's {bias, is_int32} */
    const cmsis_nn_bias_data bias_data = {B, bias32 != 0};
    const cmsis_nn_per_channel_quant_params quant =
        tvmk_cmsis_nn_per_channel(p->output_multiplier, p->output_shift);
    const cmsis_nn_dims input = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    const cmsis_nn_dims filter = tvmk_cmsis_nn_dims(p->M, p->KH, p->KW, p->C);
    const cmsis_nn_dims bias = tvmk_cmsis_nn_dims(1, 1, 1, p->M);
    const cmsis_nn_dims output = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, p->M);

    ctx.buf = p->scratch;
    ctx.size = p->scratch_bytes;
    if (p->group != 1 ||
        arm_convolve_wrapper_s16_get_buffer_size(&conv, &input, &filter, &output) > ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    }
    return tvmk_cmsis_nn_status(arm_convolve_wrapper_s16(&ctx, &conv, &quant, &input, X,
                                                         &filter, W, &bias, &bias_data,
                                                         &output, Y));
}

int32_t tvmk_cmsis_nn_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B,
                                 int16_t *Y, const struct tvmk_conv2d_s8_params *p,
                                 void *resource_handle)
{
    (void)resource_handle;
    return conv16(X, W, B, 0, Y, p);
}

int32_t tvmk_cmsis_nn_conv2d_s16_b32(const int16_t *X, const int8_t *W, const int32_t *B,
                                     int16_t *Y, const struct tvmk_conv2d_s8_params *p,
                                     void *resource_handle)
{
    (void)resource_handle;
    return conv16(X, W, B, 1, Y, p);
}

int32_t tvmk_cmsis_nn_depthwise_conv2d_s16(const int16_t *input, const int8_t *filter,
                                           const int64_t *bias, int16_t *output,
                                           const struct tvmk_depthwise_conv2d_s8_params *p,
                                           void *resource_handle)
{
    cmsis_nn_context ctx;
    const cmsis_nn_dw_conv_params dw = tvmk_cmsis_nn_dw_conv(p, 0, 0);
    const cmsis_nn_per_channel_quant_params quant =
        tvmk_cmsis_nn_per_channel(p->output_multiplier, p->output_shift);
    const cmsis_nn_dims in_dims = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    const cmsis_nn_dims f_dims = tvmk_cmsis_nn_dims(1, p->KH, p->KW, p->C * p->mult);
    const cmsis_nn_dims b_dims = tvmk_cmsis_nn_dims(1, 1, 1, p->C * p->mult);
    const cmsis_nn_dims out_dims = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, p->C * p->mult);
    (void)resource_handle;

    ctx.buf = NULL;
    ctx.size = 0;
    return tvmk_cmsis_nn_status(arm_depthwise_conv_s16(&ctx, &dw, &quant, &in_dims, input,
                                                       &f_dims, filter, &b_dims, bias,
                                                       &out_dims, output));
}

int32_t tvmk_cmsis_nn_fully_connected_s16(const int16_t *input, const int8_t *weights,
                                          const int64_t *bias, int16_t *output,
                                          const struct tvmk_fully_connected_s8_params *p,
                                          void *resource_handle)
{
    cmsis_nn_context ctx;
    cmsis_nn_fc_params fc;
    cmsis_nn_per_tensor_quant_params quant;
    const cmsis_nn_dims in_dims = tvmk_cmsis_nn_dims(p->batch, 1, 1, p->in_size);
    const cmsis_nn_dims f_dims = tvmk_cmsis_nn_dims(p->in_size, 1, 1, p->out_size);
    const cmsis_nn_dims b_dims = tvmk_cmsis_nn_dims(1, 1, 1, p->out_size);
    const cmsis_nn_dims out_dims = tvmk_cmsis_nn_dims(p->batch, 1, 1, p->out_size);
    (void)resource_handle;

    if (p->channel_multiplier != NULL || p->input_offset != 0 || p->output_offset != 0) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    ctx.buf = NULL;
    ctx.size = 0;
    fc.input_offset = 0;
    fc.filter_offset = 0;
    fc.output_offset = 0;
    fc.activation.min = p->activation_min;
    fc.activation.max = p->activation_max;
    quant.multiplier = p->output_multiplier;
    quant.shift = p->output_shift;
    return tvmk_cmsis_nn_status(arm_fully_connected_s16(&ctx, &fc, &quant, &in_dims, input,
                                                        &f_dims, weights, &b_dims, bias,
                                                        &out_dims, output));
}

int32_t tvmk_cmsis_nn_add_s16(const int16_t *A, const int16_t *B, int16_t *C,
                              const struct tvmk_add_s8_params *p, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_cmsis_nn_status(arm_elementwise_add_s16(
        A, B, p->a_offset, p->a_multiplier, p->a_shift, p->b_offset, p->b_multiplier,
        p->b_shift, p->left_shift, C, p->out_offset, p->out_multiplier, p->out_shift,
        p->act_min, p->act_max, p->count));
}

int32_t tvmk_cmsis_nn_mul_s16(const int16_t *A, const int16_t *B, int16_t *C,
                              const struct tvmk_mul_s8_params *p, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_cmsis_nn_status(arm_elementwise_mul_s16(A, B, p->a_offset, p->b_offset, C,
                                                        p->out_offset, p->out_multiplier,
                                                        p->out_shift, p->act_min, p->act_max,
                                                        p->count));
}

int32_t tvmk_cmsis_nn_softmax_s8_s16(const int8_t *input, int16_t *output,
                                     const struct tvmk_softmax_s16_params *p,
                                     void *resource_handle)
{
    (void)resource_handle;
    arm_softmax_s8_s16(input, p->outer, p->depth, p->input_multiplier, p->input_left_shift,
                       p->diff_min, output);
    return TVM_DEVICE_OK;
}

TVMK_CMSIS_NN_POOLS(s16, int16_t)

int32_t tvmk_cmsis_nn_softmax_s16(const int16_t *input, int16_t *output,
                                  const struct tvmk_softmax_s16_params *p,
                                  void *resource_handle)
{
    cmsis_nn_softmax_lut_s16 luts;
    (void)resource_handle;
    luts.exp_lut = p->exp_lut;
    luts.one_by_one_lut = p->one_over_one_plus_x_lut;
    return tvmk_cmsis_nn_status(arm_softmax_s16(input, p->outer, p->depth,
                                                p->input_multiplier, p->input_left_shift,
                                                &luts, output));
}

/* LOGISTIC or TANH through arm_nn_activation_s16, whose input rescale is 3 << left_shift
 * (left_shift >= 0) or 3 and a rounding right shift of -left_shift: TFLM's is the same
 * when its multiplier is 0 (the power-of-two case, 3 << input_left_shift) or 3 << j (then
 * left_shift = j - input_left_shift: the rounding term of TFLM's shift is below what the
 * 2^j factor leaves, so both round alike). */
static int32_t lut16(const int16_t *X, int16_t *Y, const struct tvmk_sigmoid_s16_params *p,
                     arm_nn_activation_type type)
{
    int32_t left_shift = p->input_left_shift; /* the power-of-two case */

    if (p->input_multiplier != 0) {
        int32_t j = 0;
        while (j < 14 && (INT32_C(3) << j) != p->input_multiplier) {
            ++j;
        }
        if (j == 14 || p->input_left_shift < 0 || p->input_left_shift > 31) {
            return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
        }
        left_shift = j - p->input_left_shift;
    }
    return tvmk_cmsis_nn_status(arm_nn_activation_s16(X, Y, p->count, left_shift, type));
}

int32_t tvmk_cmsis_nn_sigmoid_s16(const int16_t *X, int16_t *Y,
                                  const struct tvmk_sigmoid_s16_params *params,
                                  void *resource_handle)
{
    (void)resource_handle;
    return lut16(X, Y, params, ARM_SIGMOID);
}

int32_t tvmk_cmsis_nn_tanh_s16(const int16_t *input, int16_t *output,
                               const struct tvmk_sigmoid_s16_params *params,
                               void *resource_handle)
{
    (void)resource_handle;
    return lut16(input, output, params, ARM_TANH);
}
