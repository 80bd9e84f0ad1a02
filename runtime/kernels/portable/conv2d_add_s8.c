/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int8: conv2d_add (tvmk_fused.h), CONV_2D then ADD in one pass:
 * each output value is conv_int.h's sum, requantized and clamped as TFLM's ConvPerChannel
 * writes it, then TFLM's int8 ADD with the residual element (binary_int.h's arithmetic).
 */
#include "binary_int.h"
#include "conv_int.h"
#include "tvmk_fused.h"

TVMK_CONV_INT_WINDOW(tvmk_conv2d_add_s8, int8_t, int32_t, p->input_offset, tvmk_conv_source)

int32_t tvmk_conv2d_add_s8(const int8_t *X, const int8_t *W, const int8_t *R, const int32_t *B,
                           int8_t *Y, const struct tvmk_conv2d_add_s8_params *params,
                           void *resource_handle)
{
    const struct tvmk_conv2d_add_s8_params *f = params;
    size_t i = 0;
    int32_t n, oy, ox, m;

    (void)resource_handle;
    if (X == NULL || W == NULL || R == NULL || Y == NULL || f == NULL ||
        f->output_multiplier == NULL || f->output_shift == NULL || f->group < 1 ||
        f->C % f->group != 0 || f->M % f->group != 0 || f->stride_h < 1 || f->stride_w < 1 ||
        f->dil_h < 1 || f->dil_w < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    {
        /* The conv's half of the params as conv_int.h's window reads them, and the ADD's
         * as binary_int.h's element arithmetic does (the broadcast fields unused). */
        const struct tvmk_conv2d_s8_params conv = {
            .N = f->N, .C = f->C, .H = f->H, .W = f->W, .KH = f->KH, .KW = f->KW,
            .OH = f->OH, .OW = f->OW, .stride_h = f->stride_h, .stride_w = f->stride_w,
            .pad_top = f->pad_top, .pad_left = f->pad_left, .dil_h = f->dil_h,
            .dil_w = f->dil_w, .M = f->M, .group = f->group, .input_offset = f->input_offset};
        const struct tvmk_add_s8_params add = {
            .a_offset = f->a_offset, .b_offset = f->b_offset, .left_shift = f->left_shift,
            .a_multiplier = f->a_multiplier, .a_shift = f->a_shift,
            .b_multiplier = f->b_multiplier, .b_shift = f->b_shift,
            .out_multiplier = f->out_multiplier, .out_shift = f->out_shift,
            .out_offset = f->out_offset};
        for (n = 0; n < f->N; ++n) {
            for (oy = 0; oy < f->OH; ++oy) {
                for (ox = 0; ox < f->OW; ++ox) {
                    for (m = 0; m < f->M; ++m, ++i) {
                        int32_t acc = tvmk_conv2d_add_s8_window(X, W, &conv, n, oy, ox, m);
                        int32_t v;
                        TVMK_CONV_INT_OUT(acc, B, m, tvmk_requant_s8, f->output_multiplier[m],
                                          f->output_shift[m], f->output_offset,
                                          f->activation_min, f->activation_max);
                        v = tvmk_add_int_one(acc, R[i], &add, 0);
                        v = v < f->act_min ? f->act_min : v;
                        Y[i] = (int8_t)(v > f->act_max ? f->act_max : v);
                    }
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
