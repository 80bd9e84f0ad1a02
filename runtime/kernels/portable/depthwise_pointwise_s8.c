/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: depthwise_pointwise (tvmk_fused.h), one output row at a
 * time: the row of DEPTHWISE_CONV_2D into the scratch (tvmk_depthwise_conv2d_s8 on the
 * input rows its windows reach), then the 1x1 CONV_2D of that row (tvmk_conv2d_s8 on a
 * 1 x OW image): TFLM's two kernels, without the intermediate tensor.
 */
#include <stddef.h>

#include "tvmk_fused.h"
#include "tvmk_s8.h"

int32_t tvmk_depthwise_pointwise_s8(const int8_t *X, const int8_t *DW, const int32_t *DB,
                                    const int8_t *PW, const int32_t *PB, int8_t *Y,
                                    const struct tvmk_depthwise_pointwise_s8_params *params,
                                    void *resource_handle)
{
    const struct tvmk_depthwise_pointwise_s8_params *f = params;
    int32_t n, oy, ret;

    (void)resource_handle;
    if (X == NULL || DW == NULL || PW == NULL || Y == NULL || f == NULL || f->scratch == NULL ||
        f->stride_h < 1 || f->mult < 1 ||
        f->scratch_bytes < f->OW * f->C * f->mult) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < f->N; ++n) {
        for (oy = 0; oy < f->OH; ++oy) {
            /* The input rows from the window's first on (negative: top padding left). */
            const int32_t top = oy * f->stride_h - f->pad_top;
            const int32_t skip = top > 0 ? top : 0;
            const struct tvmk_depthwise_conv2d_s8_params dw = {
                .N = 1, .C = f->C, .H = f->H - skip, .W = f->W, .KH = f->KH, .KW = f->KW,
                .OH = 1, .OW = f->OW, .stride_h = f->stride_h, .stride_w = f->stride_w,
                .pad_top = skip - top, .pad_left = f->pad_left, .dil_h = f->dil_h,
                .dil_w = f->dil_w, .mult = f->mult, .input_offset = f->input_offset,
                .output_offset = f->output_offset, .activation_min = f->activation_min,
                .activation_max = f->activation_max, .output_multiplier = f->output_multiplier,
                .output_shift = f->output_shift};
            const struct tvmk_conv2d_s8_params pw = {
                .N = 1, .C = f->C * f->mult, .H = 1, .W = f->OW, .KH = 1, .KW = 1, .OH = 1,
                .OW = f->OW, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
                .M = f->pw_M, .group = 1, .input_offset = f->pw_input_offset,
                .output_offset = f->pw_output_offset,
                .activation_min = f->pw_activation_min,
                .activation_max = f->pw_activation_max,
                .output_multiplier = f->pw_output_multiplier,
                .output_shift = f->pw_output_shift};
            const int8_t *x = X + (((size_t)n * (size_t)f->H + (size_t)skip) * (size_t)f->W) *
                                      (size_t)f->C;
            int8_t *y = Y + (((size_t)n * (size_t)f->OH + (size_t)oy) * (size_t)f->OW) *
                                (size_t)f->pw_M;
            ret = tvmk_depthwise_conv2d_s8(x, DW, DB, (int8_t *)f->scratch, &dw, NULL);
            if (ret != TVM_DEVICE_OK) {
                return ret;
            }
            ret = tvmk_conv2d_s8((const int8_t *)f->scratch, PW, PB, y, &pw, NULL);
            if (ret != TVM_DEVICE_OK) {
                return ret;
            }
        }
    }
    return TVM_DEVICE_OK;
}
