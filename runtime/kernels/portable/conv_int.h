/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the bodies of the int8 and int16 (16x8) CONV_2D,
 * TRANSPOSE_CONV, DEPTHWISE_CONV_2D and FULLY_CONNECTED kernels (conv2d_s8.c,
 * transpose_conv2d_s8.c, depthwise_conv2d_s8.c, fully_connected_s8.c; nn_s16.c and
 * transpose_conv2d_s16.c instantiate them for int16). Private to this folder.
 * Each macro defines one kernel over input x_t and int8 weights: sums in acc_t of
 * (x + input offset) * (w + weights offset), plus the bias (bias_t), requantized by
 * requant (one of the tvmk_requant_* below), plus the output offset, clamped to the
 * activation's range. TFLM's int16 convs read no input offset (tvmdev refuses a nonzero
 * zero point): their instantiation passes 0. Outputs must not overlap inputs, but a
 * depthwise convolution's may start at its input's address (inplace_rows.h).
 */
#ifndef TVMK_PORTABLE_CONV_INT_H_
#define TVMK_PORTABLE_CONV_INT_H_

#include <stddef.h>

#include "inplace_rows.h"
#include "transpose_conv2d.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

/* The requantizations, of an accumulator acc to which a bias was added or not
 * (has_bias): int8's MultiplyByQuantizedMultiplier; int16's int64 one; and TFLM's int16
 * variant with an int32 bias, the int32 one of the accumulator wrapped to int32 as TFLM's
 * int32 sum would be (without a bias, the int64 one). */
static inline int32_t tvmk_requant_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                      int has_bias)
{
    (void)has_bias;
    return tvmk_multiply_by_quantized_multiplier(acc, multiplier, (int)shift);
}

static inline int32_t tvmk_requant_s16(int64_t acc, int32_t multiplier, int32_t shift,
                                       int has_bias)
{
    (void)has_bias;
    return tvmk_multiply_by_quantized_multiplier_64(acc, multiplier, (int)shift);
}

static inline int32_t tvmk_requant_s16_b32(int64_t acc, int32_t multiplier, int32_t shift,
                                           int has_bias)
{
    return has_bias ? tvmk_multiply_by_quantized_multiplier((int32_t)(uint32_t)(uint64_t)acc,
                                                            multiplier, (int)shift)
                    : tvmk_multiply_by_quantized_multiplier_64(acc, multiplier, (int)shift);
}

/* acc plus the bias, requantized, offset and clamped to [lo, hi]. */
#define TVMK_CONV_INT_OUT(acc, B, i, requant, multiplier, shift, offset, lo, hi)              \
    do {                                                                                     \
        int32_t v_;                                                                          \
        if ((B) != NULL) {                                                                   \
            (acc) += (B)[i];                                                                 \
        }                                                                                    \
        v_ = requant(acc, multiplier, shift, (B) != NULL) + (offset);                        \
        v_ = v_ < (lo) ? (lo) : v_;                                                          \
        (acc) = v_ > (hi) ? (hi) : v_;                                                       \
    } while (0)

/* The kernel `name` of a convolution over tvmk_conv2d_s8_params (CONV_2D and
 * TRANSPOSE_CONV): each output value is name##_window's sum, then TVMK_CONV_INT_OUT. */
#define TVMK_CONV_INT_KERNEL(name, x_t, bias_t, acc_t, requant)                              \
    int32_t name(const x_t *X, const int8_t *W, const bias_t *B, x_t *Y,                     \
                 const struct tvmk_conv2d_s8_params *params, void *resource_handle)          \
    {                                                                                        \
        const struct tvmk_conv2d_s8_params *p = params;                                      \
        int32_t n, oy, ox, m;                                                                \
                                                                                             \
        (void)resource_handle;                                                               \
        if (X == NULL || W == NULL || Y == NULL || p == NULL ||                              \
            p->output_multiplier == NULL || p->output_shift == NULL || p->group < 1 ||       \
            p->C % p->group != 0 || p->M % p->group != 0 || p->stride_h < 1 ||               \
            p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {                               \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        for (n = 0; n < p->N; ++n) {                                                         \
            for (oy = 0; oy < p->OH; ++oy) {                                                 \
                for (ox = 0; ox < p->OW; ++ox) {                                             \
                    x_t *y = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW + \
                                  (size_t)ox) * (size_t)p->M;                                \
                    for (m = 0; m < p->M; ++m) {                                             \
                        acc_t acc = name##_window(X, W, p, n, oy, ox, m);                    \
                        TVMK_CONV_INT_OUT(acc, B, m, requant, p->output_multiplier[m],       \
                                          p->output_shift[m], p->output_offset,              \
                                          p->activation_min, p->activation_max);             \
                        y[m] = (x_t)acc;                                                     \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* The input row (or column) that filter row k brings onto output row o of a convolution,
 * or -1 (padding). */
static inline int32_t tvmk_conv_source(int32_t o, int32_t k, int32_t stride, int32_t pad,
                                       int32_t dil, int32_t size)
{
    const int32_t i = o * stride - pad + k * dil;
    return i < size ? i : -1; /* negative when in the top or left padding */
}

/* name##_window: the sum over the input pixels that reach output (n, oy, ox) for output
 * channel m (its group's channels), source (tvmk_conv_source or tvmk_tconv_source)
 * mapping output rows and columns to input ones. */
#define TVMK_CONV_INT_WINDOW(name, x_t, acc_t, offset, source)                               \
    static acc_t name##_window(const x_t *X, const int8_t *W,                                \
                               const struct tvmk_conv2d_s8_params *p, int32_t n, int32_t oy, \
                               int32_t ox, int32_t m)                                        \
    {                                                                                        \
        const int32_t cg = p->C / p->group, c0 = (m / (p->M / p->group)) * cg;               \
        acc_t acc = 0;                                                                       \
        int32_t ky, kx, c;                                                                   \
                                                                                             \
        for (ky = 0; ky < p->KH; ++ky) {                                                     \
            const int32_t iy = source(oy, ky, p->stride_h, p->pad_top, p->dil_h, p->H);      \
            if (iy < 0) {                                                                    \
                continue;                                                                    \
            }                                                                                \
            for (kx = 0; kx < p->KW; ++kx) {                                                 \
                const int32_t ix = source(ox, kx, p->stride_w, p->pad_left, p->dil_w, p->W); \
                const x_t *x;                                                                \
                const int8_t *w;                                                             \
                if (ix < 0) {                                                                \
                    continue;                                                                \
                }                                                                            \
                x = X + (((size_t)n * (size_t)p->H + (size_t)iy) * (size_t)p->W +            \
                         (size_t)ix) * (size_t)p->C + (size_t)c0;                            \
                w = W + (((size_t)m * (size_t)p->KH + (size_t)ky) * (size_t)p->KW +          \
                         (size_t)kx) * (size_t)cg;                                           \
                for (c = 0; c < cg; ++c) {                                                   \
                    acc += (acc_t)((int32_t)w[c] * ((int32_t)x[c] + (offset)));              \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return acc;                                                                          \
    }

/* CONV_2D (NHWC, W [M, KH, KW, C / group], tvmk_conv2d_s8_params) as TFLM's
 * reference_integer_ops::ConvPerChannel. */
#define TVMK_CONV_INT(name, x_t, bias_t, acc_t, offset, requant)                             \
    TVMK_CONV_INT_WINDOW(name, x_t, acc_t, offset, tvmk_conv_source)                         \
    TVMK_CONV_INT_KERNEL(name, x_t, bias_t, acc_t, requant)

/* TRANSPOSE_CONV (NHWC, W [M, KH, KW, C / group], tvmk_conv2d_s8_params: pad_top /
 * pad_left where input pixel 0 lands before the output) as TFLM's
 * reference_integer_ops::TransposeConv: each output value is one sum over the input
 * pixels that reach it (transpose_conv2d.h; an integer sum, so TFLM's scatter order gives
 * the same), without TFLM's scratch. */
#define TVMK_TCONV_INT(name, x_t, bias_t, acc_t, offset, requant)                            \
    TVMK_CONV_INT_WINDOW(name, x_t, acc_t, offset, tvmk_tconv_source)                        \
    TVMK_CONV_INT_KERNEL(name, x_t, bias_t, acc_t, requant)

/* DEPTHWISE_CONV_2D (NHWC, filter [1, KH, KW, C * mult], output channel oc reading input
 * channel oc / mult; tvmk_depthwise_conv2d_s8_params) as TFLM's
 * reference_integer_ops::DepthwiseConvPerChannel. The output may start at the input's
 * address (in place, its scratch holding a ring of input rows: inplace_rows.h); else it
 * must not overlap the input. */
#define TVMK_DEPTHWISE_CONV_INT(name, x_t, bias_t, acc_t, offset, requant)                   \
    static acc_t name##_window(const struct tvmk_rows *rows, const int8_t *filter,           \
                               const struct tvmk_depthwise_conv2d_s8_params *p, int32_t n,   \
                               int32_t oy, int32_t ox, int32_t oc)                           \
    {                                                                                        \
        const int32_t oc_count = p->C * p->mult;                                             \
        const int32_t ic = oc / p->mult;                                                     \
        const int32_t y0 = oy * p->stride_h - p->pad_top;                                    \
        const int32_t x0 = ox * p->stride_w - p->pad_left;                                   \
        acc_t acc = 0;                                                                       \
        int32_t ky, kx;                                                                      \
                                                                                             \
        for (ky = 0; ky < p->KH; ++ky) {                                                     \
            const int32_t iy = y0 + ky * p->dil_h;                                           \
            const x_t *row;                                                                  \
            if (iy < 0 || iy >= p->H) {                                                      \
                continue;                                                                    \
            }                                                                                \
            row = (const x_t *)tvmk_rows_at(rows, n, p->H, iy);                              \
            for (kx = 0; kx < p->KW; ++kx) {                                                 \
                const int32_t ix = x0 + kx * p->dil_w;                                       \
                int32_t x, w;                                                                \
                if (ix < 0 || ix >= p->W) {                                                  \
                    continue;                                                                \
                }                                                                            \
                x = row[(size_t)ix * (size_t)p->C + (size_t)ic];                             \
                w = filter[((size_t)ky * (size_t)p->KW + (size_t)kx) * (size_t)oc_count +    \
                           (size_t)oc];                                                      \
                acc += (acc_t)(w * (x + (offset)));                                          \
            }                                                                                \
        }                                                                                    \
        return acc;                                                                          \
    }                                                                                        \
                                                                                             \
    int32_t name(const x_t *input, const int8_t *filter, const bias_t *bias, x_t *output,    \
                 const struct tvmk_depthwise_conv2d_s8_params *params, void *resource_handle)\
    {                                                                                        \
        const struct tvmk_depthwise_conv2d_s8_params *p = params;                            \
        struct tvmk_rows_shape shape;                                                        \
        struct tvmk_rows rows;                                                               \
        int32_t n, oy, ox, oc, oc_count;                                                     \
                                                                                             \
        (void)resource_handle;                                                               \
        if (input == NULL || filter == NULL || output == NULL || p == NULL ||                \
            p->output_multiplier == NULL || p->output_shift == NULL || p->mult < 1 ||        \
            p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {            \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        TVMK_ROWS_SHAPE(shape, p, sizeof(x_t));                                              \
        if (tvmk_rows_init(&rows, input, output, &shape, p->scratch, p->scratch_bytes)) {    \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        oc_count = p->C * p->mult;                                                           \
        for (n = 0; n < p->N; ++n) {                                                         \
            for (oy = 0; oy < p->OH; ++oy) {                                                 \
                tvmk_rows_keep(&rows, n * p->OH + oy,                                        \
                               n * p->H + tvmk_rows_first(&shape, oy));                      \
                for (ox = 0; ox < p->OW; ++ox) {                                             \
                    x_t *y = output + (((size_t)n * (size_t)p->OH + (size_t)oy) *            \
                                       (size_t)p->OW + (size_t)ox) * (size_t)oc_count;       \
                    for (oc = 0; oc < oc_count; ++oc) {                                      \
                        acc_t acc = name##_window(&rows, filter, p, n, oy, ox, oc);          \
                        TVMK_CONV_INT_OUT(acc, bias, oc, requant, p->output_multiplier[oc],  \
                                          p->output_shift[oc], p->output_offset,             \
                                          p->activation_min, p->activation_max);             \
                        y[oc] = (x_t)acc;                                                    \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* FULLY_CONNECTED (weights [out_size, in_size], tvmk_fully_connected_s8_params; output
 * shift at most max_shift) as TFLM's reference_integer_ops::FullyConnected
 * (FullyConnectedPerChannel with per-channel weights). */
#define TVMK_FULLY_CONNECTED_INT(name, x_t, bias_t, acc_t, requant, max_shift)               \
    int32_t name(const x_t *input, const int8_t *weights, const bias_t *bias, x_t *output,   \
                 const struct tvmk_fully_connected_s8_params *params, void *resource_handle) \
    {                                                                                        \
        const struct tvmk_fully_connected_s8_params *p = params;                             \
        int32_t b, o, i;                                                                     \
                                                                                             \
        (void)resource_handle;                                                               \
        if (input == NULL || weights == NULL || output == NULL || p == NULL ||               \
            p->batch < 0 || p->in_size < 0 || p->out_size < 0 ||                             \
            p->output_shift > (max_shift) || p->output_shift < -31 ||                        \
            p->activation_min > p->activation_max) {                                         \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        for (b = 0; b < p->batch; ++b) {                                                     \
            const x_t *x = input + (size_t)b * (size_t)p->in_size;                           \
            x_t *y = output + (size_t)b * (size_t)p->out_size;                               \
            for (o = 0; o < p->out_size; ++o) {                                              \
                const int8_t *w = weights + (size_t)o * (size_t)p->in_size;                  \
                const int per_channel =                                                      \
                    p->channel_multiplier != NULL && p->channel_shift != NULL;               \
                acc_t acc = 0;                                                               \
                for (i = 0; i < p->in_size; ++i) {                                           \
                    acc += (acc_t)(((int32_t)w[i] + p->weights_offset) *                     \
                                   ((int32_t)x[i] + p->input_offset));                       \
                }                                                                            \
                TVMK_CONV_INT_OUT(acc, bias, o, requant,                                     \
                                  per_channel ? p->channel_multiplier[o]                     \
                                              : p->output_multiplier,                        \
                                  per_channel ? p->channel_shift[o] : p->output_shift,       \
                                  p->output_offset, p->activation_min, p->activation_max);   \
                y[o] = (x_t)acc;                                                             \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#endif /* TVMK_PORTABLE_CONV_INT_H_ */
