/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 MAX_POOL_2D, NHWC, as TFLM computes it: the largest of
 * the window's positions inside the input (-128 for none), clamped to the fused
 * activation's range (tvmk_s8_ops.h).
 */
#include "pool_s8.h"

int32_t tvmk_maxpool2d_s8(const int8_t *X, int8_t *Y, const struct tvmk_pool2d_s8_params *params,
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
                tvmk_pool_s8_window(ox, p->stride_w, p->pad_left, p->KW, p->W, &x0, &x1);
                for (c = 0; c < p->C; ++c) {
                    int32_t best = -128;
                    for (y = y0; y < y1; ++y) {
                        const int8_t *row = X + (((size_t)n * (size_t)p->H + (size_t)y) *
                                                 (size_t)p->W) * (size_t)p->C + (size_t)c;
                        for (x = x0; x < x1; ++x) {
                            const int32_t v = row[(size_t)x * (size_t)p->C];
                            best = v > best ? v : best;
                        }
                    }
                    out[c] = tvmk_pool_s8_clamp(best, p);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
