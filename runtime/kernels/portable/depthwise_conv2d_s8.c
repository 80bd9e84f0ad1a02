/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: DEPTHWISE_CONV_2D (NHWC, per-channel requantization) as
 * TFLM's reference_integer_ops::DepthwiseConvPerChannel. output must not overlap input.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8.h"

/* The sum over one output position's window for output channel oc (input channel
 * oc / mult). */
static int32_t window_sum(const int8_t *input, const int8_t *filter,
                          const struct tvmk_depthwise_conv2d_s8_params *p, int32_t n,
                          int32_t oy, int32_t ox, int32_t oc)
{
    const int32_t oc_count = p->C * p->mult;
    const int32_t ic = oc / p->mult;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    int32_t acc = 0;
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
            acc += w * (x + p->input_offset);
        }
    }
    return acc;
}

int32_t tvmk_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                 const int32_t *bias, int8_t *output,
                                 const struct tvmk_depthwise_conv2d_s8_params *params,
                                 void *resource_handle)
{
    const struct tvmk_depthwise_conv2d_s8_params *p = params;
    int32_t n, oy, ox, oc;

    (void)resource_handle;
    if (input == NULL || filter == NULL || output == NULL || p == NULL ||
        p->output_multiplier == NULL || p->output_shift == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->mult < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            for (ox = 0; ox < p->OW; ++ox) {
                int8_t *y = output + (((size_t)n * (size_t)p->OH + (size_t)oy) *
                                      (size_t)p->OW + (size_t)ox) * (size_t)(p->C * p->mult);
                for (oc = 0; oc < p->C * p->mult; ++oc) {
                    int32_t acc = window_sum(input, filter, p, n, oy, ox, oc);
                    if (bias != NULL) {
                        acc += bias[oc];
                    }
                    acc = tvmk_multiply_by_quantized_multiplier(acc, p->output_multiplier[oc],
                                                                (int)p->output_shift[oc]);
                    acc += p->output_offset;
                    acc = acc < p->activation_min ? p->activation_min : acc;
                    acc = acc > p->activation_max ? p->activation_max : acc;
                    y[oc] = (int8_t)acc;
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
