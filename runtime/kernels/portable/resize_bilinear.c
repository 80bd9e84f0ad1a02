/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: TFLite's RESIZE_BILINEAR, float32 and int8
 * (tvmk_resize_bilinear_params), as TFLM's reference kernels compute it: float32 in
 * float, the products summed in TFLM's order; int8 in fixed point (positions with 10
 * fractional bits, the sum of the four products with 20, rounded halves away from zero),
 * the values interpolated raw (the output keeps the input's quantization, as TFLM). An
 * int16 variant is the int8 one over int16_t: the sum fits in int64 either way. Not in
 * place: Y must not overlap X.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"
#include "tvmk_s8_ops.h"

/* The input rows (or columns) position v reads, and the position, in float. */
static void tvmk_bilinear_taps_f32(int32_t v, float scale, int32_t half, int32_t size,
                                   float *pos, int32_t *lo, int32_t *hi)
{
    const float p = half ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
    const int32_t f = (int32_t)floorf(p), c = (int32_t)ceilf(p);

    *pos = p;
    *lo = f > 0 ? f : 0;
    *hi = c < size - 1 ? c : size - 1;
}

/* The same with 10 fractional bits (C's division truncates, as TFLM's). */
static void tvmk_bilinear_taps_q10(int32_t v, int32_t scale_10, int32_t half, int32_t size,
                                   int32_t *pos, int32_t *lo, int32_t *hi)
{
    const int32_t p = half ? v * scale_10 + scale_10 / 2 - (1 << 9) : v * scale_10;
    const int32_t f = p / (1 << 10), c = (p + (1 << 10) - 1) / (1 << 10);

    *pos = p;
    *lo = f > 0 ? f : 0;
    *hi = c < size - 1 ? c : size - 1;
}

static int tvmk_bilinear_ok(const void *X, const void *Y,
                            const struct tvmk_resize_bilinear_params *p)
{
    return X != NULL && Y != NULL && p != NULL && p->N >= 0 && p->H > 0 && p->W > 0 &&
           p->C >= 0 && p->OH >= 0 && p->OW >= 0;
}

int32_t tvmk_resize_bilinear_f32(const float *X, float *Y,
                                 const struct tvmk_resize_bilinear_params *params,
                                 void *resource_handle)
{
    const struct tvmk_resize_bilinear_params *p = params;
    int32_t b, y, x, c, y0, y1, x0, x1;
    float py, px;

    (void)resource_handle;
    if (!tvmk_bilinear_ok(X, Y, p)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->N; ++b) {
        const float *xb = X + (size_t)b * (size_t)p->H * (size_t)p->W * (size_t)p->C;
        for (y = 0; y < p->OH; ++y) {
            tvmk_bilinear_taps_f32(y, p->scale_h, p->half_pixel_centers, p->H, &py, &y0, &y1);
            for (x = 0; x < p->OW; ++x) {
                const float *r0, *r1;
                float dy, dx;
                tvmk_bilinear_taps_f32(x, p->scale_w, p->half_pixel_centers, p->W, &px, &x0,
                                       &x1);
                dy = py - (float)y0;
                dx = px - (float)x0;
                r0 = xb + (size_t)y0 * (size_t)p->W * (size_t)p->C;
                r1 = xb + (size_t)y1 * (size_t)p->W * (size_t)p->C;
                for (c = 0; c < p->C; ++c) {
                    const size_t c0 = (size_t)x0 * (size_t)p->C + (size_t)c;
                    const size_t c1 = (size_t)x1 * (size_t)p->C + (size_t)c;
                    *Y++ = r0[c0] * (1 - dy) * (1 - dx) + r1[c0] * dy * (1 - dx) +
                           r0[c1] * (1 - dy) * dx + r1[c1] * dy * dx;
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}

/* TFLM's rounding of a 20-fractional-bit sum: halves away from zero. */
static int8_t tvmk_bilinear_round_s8(int64_t sum)
{
    const int64_t round = sum > 0 ? ((int64_t)1 << 19) : -((int64_t)1 << 19);

    return (int8_t)((sum + round) / ((int64_t)1 << 20));
}

int32_t tvmk_resize_bilinear_s8(const int8_t *X, int8_t *Y,
                                const struct tvmk_resize_bilinear_params *params,
                                void *resource_handle)
{
    const struct tvmk_resize_bilinear_params *p = params;
    const int64_t one = 1 << 10;
    int32_t b, y, x, c, y0, y1, x0, x1, py, px;

    (void)resource_handle;
    if (!tvmk_bilinear_ok(X, Y, p)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->N; ++b) {
        const int8_t *xb = X + (size_t)b * (size_t)p->H * (size_t)p->W * (size_t)p->C;
        for (y = 0; y < p->OH; ++y) {
            int64_t fy;
            tvmk_bilinear_taps_q10(y, p->scale_h_10, p->half_pixel_centers, p->H, &py, &y0,
                                   &y1);
            fy = (int64_t)py - one * y0;
            for (x = 0; x < p->OW; ++x) {
                const int8_t *r0 = xb + (size_t)y0 * (size_t)p->W * (size_t)p->C;
                const int8_t *r1 = xb + (size_t)y1 * (size_t)p->W * (size_t)p->C;
                int64_t fx;
                tvmk_bilinear_taps_q10(x, p->scale_w_10, p->half_pixel_centers, p->W, &px,
                                       &x0, &x1);
                fx = (int64_t)px - one * x0;
                for (c = 0; c < p->C; ++c) {
                    const size_t c0 = (size_t)x0 * (size_t)p->C + (size_t)c;
                    const size_t c1 = (size_t)x1 * (size_t)p->C + (size_t)c;
                    const int64_t sum = r0[c0] * (one - fy) * (one - fx) +
                                        r1[c0] * fy * (one - fx) + r0[c1] * (one - fy) * fx +
                                        r1[c1] * fy * fx;
                    *Y++ = tvmk_bilinear_round_s8(sum);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
