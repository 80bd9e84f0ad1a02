/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16 (16x8): CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * as TFLM's reference_integer_ops ConvPerChannel, DepthwiseConvPerChannel and
 * FullyConnected(PerChannel) of int16 input, int8 weights and int64 bias: int64
 * accumulation, the int64 MultiplyByQuantizedMultiplier (per output channel for the
 * convs), then the clamp to the activation's range. The convs read no offsets (TFLM's
 * 16x8 convs have none; tvmdev refuses a nonzero zero point); fully_connected adds them.
 * With an int32 bias (the _b32 kernels), TFLM's int32-accumulator variant: the int32
 * MultiplyByQuantizedMultiplier. Outputs must not overlap inputs.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

/* The accumulator requantized: by the int64 MultiplyByQuantizedMultiplier, or (bias32:
 * TFLM's int32-accumulator variant, an int32 bias) by the int32 one of the accumulator
 * wrapped to int32 as TFLM's int32 sum would be. */
static int16_t requantize_64(int64_t acc, int32_t multiplier, int32_t shift, int32_t offset,
                             int32_t lo, int32_t hi, int bias32)
{
    int32_t v = bias32 ? tvmk_multiply_by_quantized_multiplier(
                             (int32_t)(uint32_t)(uint64_t)acc, multiplier, (int)shift)
                       : tvmk_multiply_by_quantized_multiplier_64(acc, multiplier, (int)shift);
    v += offset;
    v = v < lo ? lo : v;
    return (int16_t)(v > hi ? hi : v);
}

/* conv2d: the sum over one output position's window for output channel m. */
static int64_t conv_window(const int16_t *X, const int8_t *W,
                           const struct tvmk_conv2d_s8_params *p, int32_t n, int32_t oy,
                           int32_t ox, int32_t m)
{
    const int32_t cg = p->C / p->group;
    const int32_t c0 = (m / (p->M / p->group)) * cg;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    int64_t acc = 0;
    int32_t ky, kx, c;

    for (ky = 0; ky < p->KH; ++ky) {
        const int32_t iy = y0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->H) {
            continue;
        }
        for (kx = 0; kx < p->KW; ++kx) {
            const int32_t ix = x0 + kx * p->dil_w;
            const int16_t *x;
            const int8_t *w;
            if (ix < 0 || ix >= p->W) {
                continue;
            }
            x = X + (((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W + (size_t)ix) *
                        (size_t)p->C + (size_t)c0;
            w = W + (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW + (size_t)kx) *
                        (size_t)cg;
            for (c = 0; c < cg; ++c) {
                acc += (int64_t)((int32_t)w[c] * (int32_t)x[c]);
            }
        }
    }
    return acc;
}

/* conv2d with an int64 bias (B64) or an int32 one (B32, the int32 requantization); at
 * most one is given. */
static int32_t conv(const int16_t *X, const int8_t *W, const int64_t *B64, const int32_t *B32,
                    int16_t *Y, const struct tvmk_conv2d_s8_params *p)
{
    int32_t n, oy, ox, m;

    if (X == NULL || W == NULL || Y == NULL || p == NULL || p->output_multiplier == NULL ||
        p->output_shift == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->group < 1 || p->C % p->group != 0 || p->M % p->group != 0 || p->stride_h < 1 ||
        p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                int16_t *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW +
                                  (size_t)ox) * (size_t)p->M;
                for (m = 0; m < p->M; ++m) {
                    int64_t acc = conv_window(X, W, p, n, oy, ox, m);
                    acc += B64 != NULL ? B64[m] : (B32 != NULL ? B32[m] : 0);
                    y[m] = requantize_64(acc, p->output_multiplier[m], p->output_shift[m],
                                         p->output_offset, p->activation_min,
                                         p->activation_max, B32 != NULL);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_conv2d_s16(const int16_t *X, const int8_t *W, const int64_t *B, int16_t *Y,
                        const struct tvmk_conv2d_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return conv(X, W, B, NULL, Y, params);
}

int32_t tvmk_conv2d_s16_b32(const int16_t *X, const int8_t *W, const int32_t *B, int16_t *Y,
                            const struct tvmk_conv2d_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return conv(X, W, NULL, B, Y, params);
}

/* depthwise_conv2d: the sum over one output position's window for output channel oc
 * (input channel oc / mult). */
static int64_t depthwise_window(const int16_t *input, const int8_t *filter,
                                const struct tvmk_depthwise_conv2d_s8_params *p, int32_t n,
                                int32_t oy, int32_t ox, int32_t oc)
{
    const int32_t oc_count = p->C * p->mult;
    const int32_t ic = oc / p->mult;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    int64_t acc = 0;
    int32_t ky, kx;

    for (ky = 0; ky < p->KH; ++ky) {
        const int32_t iy = y0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->H) {
            continue;
        }
        for (kx = 0; kx < p->KW; ++kx) {
            const int32_t ix = x0 + kx * p->dil_w;
            int32_t x, w;
            if (ix < 0 || ix >= p->W) {
                continue;
            }
            x = input[(((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W + (size_t)ix) *
                          (size_t)p->C + (size_t)ic];
            w = filter[((size_t)ky * (size_t)p->KW + (size_t)kx) * (size_t)oc_count +
                       (size_t)oc];
            acc += (int64_t)(w * x);
        }
    }
    return acc;
}

int32_t tvmk_depthwise_conv2d_s16(const int16_t *input, const int8_t *filter,
                                  const int64_t *bias, int16_t *output,
                                  const struct tvmk_depthwise_conv2d_s8_params *params,
                                  void *resource_handle)
{
    const struct tvmk_depthwise_conv2d_s8_params *p = params;
    int32_t n, oy, ox, oc, oc_count;

    (void)resource_handle;
    if (input == NULL || filter == NULL || output == NULL || p == NULL ||
        p->output_multiplier == NULL || p->output_shift == NULL || p->mult < 1 ||
        p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    oc_count = p->C * p->mult;
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                int16_t *y = output + (((size_t)n * (size_t)p->OH + (size_t)oy) *
                                       (size_t)p->OW + (size_t)ox) * (size_t)oc_count;
                for (oc = 0; oc < oc_count; ++oc) {
                    int64_t acc = depthwise_window(input, filter, p, n, oy, ox, oc);
                    if (bias != NULL) {
                        acc += bias[oc];
                    }
                    y[oc] = requantize_64(acc, p->output_multiplier[oc], p->output_shift[oc],
                                          p->output_offset, p->activation_min,
                                          p->activation_max, 0);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}

/* fully_connected with an int64 bias (B64) or an int32 one (B32); at most one is given. */
static int32_t fully_connected(const int16_t *input, const int8_t *weights, const int64_t *B64,
                               const int32_t *B32, int16_t *output,
                               const struct tvmk_fully_connected_s8_params *p)
{
    int32_t b, o, i;

    if (input == NULL || weights == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->batch < 0 || p->in_size < 0 || p->out_size < 0 || p->output_shift > 7 ||
        p->output_shift < -31 || p->activation_min > p->activation_max) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->batch; ++b) {
        const int16_t *x = input + (size_t)b * (size_t)p->in_size;
        int16_t *y = output + (size_t)b * (size_t)p->out_size;
        for (o = 0; o < p->out_size; ++o) {
            const int8_t *w = weights + (size_t)o * (size_t)p->in_size;
            const int per_channel = p->channel_multiplier != NULL && p->channel_shift != NULL;
            int64_t acc = 0;
            for (i = 0; i < p->in_size; ++i) {
                acc += (int64_t)(((int32_t)w[i] + p->weights_offset) *
                                 ((int32_t)x[i] + p->input_offset));
            }
            acc += B64 != NULL ? B64[o] : (B32 != NULL ? B32[o] : 0);
            y[o] = requantize_64(acc, per_channel ? p->channel_multiplier[o]
                                                  : p->output_multiplier,
                                 per_channel ? p->channel_shift[o] : p->output_shift,
                                 p->output_offset, p->activation_min, p->activation_max,
                                 B32 != NULL);
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_fully_connected_s16(const int16_t *input, const int8_t *weights,
                                 const int64_t *bias, int16_t *output,
                                 const struct tvmk_fully_connected_s8_params *params,
                                 void *resource_handle)
{
    (void)resource_handle;
    return fully_connected(input, weights, bias, NULL, output, params);
}

int32_t tvmk_fully_connected_s16_b32(const int16_t *input, const int8_t *weights,
                                     const int32_t *bias, int16_t *output,
                                     const struct tvmk_fully_connected_s8_params *params,
                                     void *resource_handle)
{
    (void)resource_handle;
    return fully_connected(input, weights, NULL, bias, output, params);
}
