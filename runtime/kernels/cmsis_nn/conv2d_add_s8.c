/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: conv2d_add (tvmk_fused.h), a tile of output rows at a time: the convolution
 * of the input rows the tile's windows reach through arm_convolve_wrapper_s8 (as
 * conv2d_s8.c, TFLM's kernels/cmsis_nn/conv.cc) into the scratch, then
 * arm_elementwise_add_s8 of the tile and the residual (as TFLM's kernels/cmsis_nn/add.cc)
 * into Y, which may be R. The scratch is the tile (TVMK_CONV_ADD_TILE rows, rounded up to
 * a word) and then CMSIS-NN's buffer for the whole convolution's dims.
 */
#include "tvmk_cmsis_nn_glue.h"

/* The most bytes of a tile (at least one row): tvmdev/plan/hooks/cmsis_nn.py's
 * CONV_ADD_TILE_BYTES, which sized the scratch. */
#define TVMK_CONV_ADD_TILE_BYTES 2048

/* The tile's rows. */
static int32_t tvmk_conv_add_tile_rows(const struct tvmk_conv2d_add_s8_params *p)
{
    const int32_t row = p->OW * p->M;
    const int32_t rows = row > 0 ? TVMK_CONV_ADD_TILE_BYTES / row : 1;
    return rows < 1 ? 1 : (rows > p->OH ? p->OH : rows);
}

int32_t tvmk_cmsis_nn_conv2d_add_s8(const int8_t *X, const int8_t *W, const int8_t *R,
                                    const int32_t *B, int8_t *Y,
                                    const struct tvmk_conv2d_add_s8_params *p,
                                    void *resource_handle)
{
    const int32_t rows = tvmk_conv_add_tile_rows(p);
    const int32_t tile = ((rows * p->OW * p->M) + 3) & ~3;
    const cmsis_nn_per_channel_quant_params quant =
        tvmk_cmsis_nn_per_channel(p->output_multiplier, p->output_shift);
    const cmsis_nn_dims filter = tvmk_cmsis_nn_dims(p->M, p->KH, p->KW, p->C / p->group);
    const cmsis_nn_dims bias = tvmk_cmsis_nn_dims(1, 1, 1, p->M);
    const cmsis_nn_dims whole_in = tvmk_cmsis_nn_dims(p->N, p->H, p->W, p->C);
    const cmsis_nn_dims whole_out = tvmk_cmsis_nn_dims(p->N, p->OH, p->OW, p->M);
    cmsis_nn_conv_params conv;
    cmsis_nn_context ctx;
    int32_t n, r0;
    (void)resource_handle;

    conv.input_offset = p->input_offset;
    conv.output_offset = p->output_offset;
    conv.stride.h = p->stride_h;
    conv.stride.w = p->stride_w;
    conv.padding.h = p->pad_top;
    conv.padding.w = p->pad_left;
    conv.dilation.h = p->dil_h;
    conv.dilation.w = p->dil_w;
    conv.activation.min = p->activation_min;
    conv.activation.max = p->activation_max;
    ctx.buf = (int8_t *)p->scratch + tile;
    ctx.size = p->scratch_bytes - tile;
    if (p->scratch == NULL || ctx.size < 0 ||
        arm_convolve_wrapper_s8_get_buffer_size(&conv, &whole_in, &filter, &whole_out) >
            ctx.size) {
        return TVM_DEVICE_ERR_INVALID; /* planned for another architecture */
    }
    for (n = 0; n < p->N; ++n) {
        for (r0 = 0; r0 < p->OH; r0 += rows) {
            const int32_t count = (p->OH - r0 < rows ? p->OH - r0 : rows);
            /* The input rows from the tile's first window on (before it: top padding). */
            const int32_t top = r0 * p->stride_h - p->pad_top;
            const int32_t skip = top > 0 ? top : 0;
            const int32_t end = (r0 + count - 1) * p->stride_h - p->pad_top +
                                (p->KH - 1) * p->dil_h + 1;
            const cmsis_nn_dims in =
                tvmk_cmsis_nn_dims(1, (end < p->H ? end : p->H) - skip, p->W, p->C);
            const cmsis_nn_dims out = tvmk_cmsis_nn_dims(1, count, p->OW, p->M);
            const size_t first = ((size_t)n * (size_t)p->OH + (size_t)r0) * (size_t)p->OW *
                                 (size_t)p->M;
            int32_t ret;
            conv.padding.h = skip - top;
            ret = tvmk_cmsis_nn_status(arm_convolve_wrapper_s8(
                &ctx, &conv, &quant, &in,
                X + (((size_t)n * (size_t)p->H + (size_t)skip) * (size_t)p->W) * (size_t)p->C,
                &filter, W, &bias, B, &out, (int8_t *)p->scratch));
            if (ret != TVM_DEVICE_OK) {
                return ret;
            }
            ret = tvmk_cmsis_nn_status(arm_elementwise_add_s8(
                (const int8_t *)p->scratch, R + first, p->a_offset, p->a_multiplier,
                p->a_shift, p->b_offset, p->b_multiplier, p->b_shift, p->left_shift, Y + first,
                p->out_offset, p->out_multiplier, p->out_shift, p->act_min, p->act_max,
                count * p->OW * p->M));
            if (ret != TVM_DEVICE_OK) {
                return ret;
            }
        }
    }
    return TVM_DEVICE_OK;
}
