/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 AVERAGE_POOL_2D, NHWC, as TFLM computes it: the sum of
 * the window's positions inside the input divided by their count, rounded half away from
 * zero, then clamped to the fused activation's range (tvmk_s8_ops.h). A window wholly
 * in the padding is an error, as in TFLM.
 */
#include "pool_s8.h"

int32_t tvmk_avgpool2d_s8(const int8_t *X, int8_t *Y, const struct tvmk_pool2d_s8_params *params,
                          void *resource_handle)
{
    const struct tvmk_pool2d_s8_params *p = params;
    int32_t n, oy, ox, c, y, x, y0, y1, x0, x1;

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL || !tvmk_pool_s8_valid(p)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (n = 0; n < p->N; ++n) {
        for (oy = 0; oy < p->OH; ++oy) {
            tvmk_pool_s8_window(oy, p->stride_h, p->pad_top, p->KH, p->H, &y0, &y1);
            for (ox = 0; ox < p->OW; ++ox) {
                int8_t *out = Y + (((size_t)n * (size_t)p->OH + (size_t)oy) * (size_t)p->OW +
                                   (size_t)ox) * (size_t)p->C;
                int32_t count;
                tvmk_pool_s8_window(ox, p->stride_w, p->pad_left, p->KW, p->W, &x0, &x1);
                count = (y1 - y0) * (x1 - x0);
                if (y1 <= y0 || x1 <= x0) {
                    return TVM_DEVICE_ERR_INVALID;
                }
                for (c = 0; c < p->C; ++c) {
                    int32_t acc = 0;
                    for (y = y0; y < y1; ++y) {
                        const int8_t *row = X + (((size_t)n * (size_t)p->H + (size_t)y) *
                                                 (size_t)p->W) * (size_t)p->C + (size_t)c;
                        for (x = x0; x < x1; ++x) {
                            acc += row[(size_t)x * (size_t)p->C];
                        }
                    }
                    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    out[c] = tvmk_pool_s8_clamp(acc, p);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
