/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: DEPTHWISE_CONV_2D (TFLite), NHWC, with a depth multiplier,
 * stride, padding, dilation, an optional bias and a fused activation.
 *
 * Output channel c * mult + j is input channel c convolved with filter channel
 * c * mult + j; the filter is 1 x KH x KW x (C * mult). Each output pixel starts at the
 * bias, then each tap inside the image adds its input pixel's channels times the
 * filter's, both contiguous. Y may start at X's address (in place: the scratch holds a
 * ring of X's rows, inplace_rows.h); else it must not overlap X.
 */
#include <stddef.h>

#include "activation.h"
#include "inplace_rows.h"

/* One output pixel: output[n, oh, ow, 0..C * mult). */
static void tvmk_depthwise_pixel(const struct tvmk_rows *rows, const float *filter,
                                 const float *bias, float *y,
                                 const struct tvmk_depthwise_conv2d_params *p, int32_t n,
                                 int32_t oh, int32_t ow)
{
    const int32_t mc = p->C * p->mult;
    int32_t o, kh, kw;

    for (o = 0; o < mc; ++o) {
        y[o] = bias == NULL ? 0.0f : bias[o];
    }
    for (kh = 0; kh < p->KH; ++kh) {
        const int32_t ih = oh * p->stride_h + kh * p->dil_h - p->pad_top;
        const float *row;
        if (ih < 0 || ih >= p->H) {
            continue;
        }
        row = (const float *)tvmk_rows_at(rows, n, p->H, ih);
        for (kw = 0; kw < p->KW; ++kw) {
            const int32_t iw = ow * p->stride_w + kw * p->dil_w - p->pad_left;
            const float *x, *w;
            if (iw < 0 || iw >= p->W) {
                continue;
            }
            x = row + (size_t)iw * (size_t)p->C;
            w = filter + ((size_t)kh * (size_t)p->KW + (size_t)kw) * (size_t)mc;
            for (o = 0; o < mc; ++o) {
                y[o] += x[o / p->mult] * w[o];
            }
        }
    }
    for (o = 0; o < mc; ++o) {
        y[o] = tvmk_activate(p->activation, y[o]);
    }
}

int32_t tvmk_depthwise_conv2d_f32(const float *input, const float *filter, const float *bias,
                                  float *output,
                                  const struct tvmk_depthwise_conv2d_params *params,
                                  void *resource_handle)
{
    const struct tvmk_depthwise_conv2d_params *p = params;
    struct tvmk_rows_shape shape;
    struct tvmk_rows rows;
    int32_t n, oh, ow;

    (void)resource_handle;
    if (input == NULL || filter == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->N < 0 || p->C < 0 || p->H < 0 || p->W < 0 || p->KH <= 0 || p->KW <= 0 ||
        p->mult <= 0 || p->OH < 0 || p->OW < 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
        p->dil_h <= 0 || p->dil_w <= 0 || !tvmk_act_valid(p->activation)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    TVMK_ROWS_SHAPE(shape, p, sizeof(float));
    if (tvmk_rows_init(&rows, input, output, &shape, p->scratch, p->scratch_bytes) != 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oh = 0; oh < p->OH; ++oh) {
            tvmk_rows_keep(&rows, n * p->OH + oh, n * p->H + tvmk_rows_first(&shape, oh));
            for (ow = 0; ow < p->OW; ++ow) {
                float *y = output + (((size_t)n * (size_t)p->OH + (size_t)oh) * (size_t)p->OW +
                                     (size_t)ow) * (size_t)p->C * (size_t)p->mult;
                tvmk_depthwise_pixel(&rows, filter, bias, y, p, n, oh, ow);
            }
        }
    }
    return TVM_DEVICE_OK;
}
