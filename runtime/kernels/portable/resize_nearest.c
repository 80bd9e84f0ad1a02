/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: TFLite's RESIZE_NEAREST_NEIGHBOR, float32, int8 and int16
 * (tvmk_resize_nearest_params): each output pixel of the NHWC tensor copies its C values
 * from the input pixel TFLM picks, the index computed in float as TFLM computes it. The
 * values are copied as they are (int8 and int16 keep the input's quantization, as TFLM). Not in
 * place: Y must not overlap X.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"
#include "tvmk_s16.h"
#include "tvmk_s8_ops.h"

/* The input row (or column) output position v copies: (v + 0.5 with half-pixel centers)
 * * scale, floored (rounded, halves away from zero, with aligned corners), at most
 * size - 1 (and at least 0 with half-pixel centers); or with ONNX's rounding, the floor
 * or ceiling of that plus the offset, in [0, size - 1]. */
static int32_t tvmk_nearest(int32_t v, int32_t size, float scale,
                            const struct tvmk_resize_nearest_params *p)
{
    const float f = ((float)v + (p->half_pixel_centers ? 0.5f : 0.0f)) * scale;
    int32_t i;

    if (p->rounding != TVMK_ROUND_TFLM) { /* ONNX's modes: clamped at both ends */
        const float g = f + p->offset;
        i = p->rounding == TVMK_ROUND_CEIL ? (int32_t)ceilf(g) : (int32_t)floorf(g);
        i = i > size - 1 ? size - 1 : i;
        return i < 0 ? 0 : i;
    }
    i = p->align_corners ? (int32_t)roundf(f) : (int32_t)floorf(f);
    i = i > size - 1 ? size - 1 : i;
    return p->half_pixel_centers && i < 0 ? 0 : i;
}

static int32_t tvmk_resize_check(const void *X, const void *Y,
                                 const struct tvmk_resize_nearest_params *p)
{
    return X != NULL && Y != NULL && p != NULL && p->N >= 0 && p->H > 0 && p->W > 0 &&
           p->C >= 0 && p->OH >= 0 && p->OW >= 0 && p->rounding >= TVMK_ROUND_TFLM &&
           p->rounding <= TVMK_ROUND_CEIL;
}

/* The copy, for elements of elem bytes. */
static void tvmk_resize_copy(const unsigned char *X, unsigned char *Y,
                             const struct tvmk_resize_nearest_params *p, size_t elem)
{
    const size_t pixel = (size_t)p->C * elem;
    int32_t b, y, x;

    for (b = 0; b < p->N; ++b) {
        const unsigned char *xb = X + (size_t)b * (size_t)p->H * (size_t)p->W * pixel;
        for (y = 0; y < p->OH; ++y) {
            const int32_t iy = tvmk_nearest(y, p->H, p->scale_h, p);
            const unsigned char *row = xb + (size_t)iy * (size_t)p->W * pixel;
            for (x = 0; x < p->OW; ++x) {
                const int32_t ix = tvmk_nearest(x, p->W, p->scale_w, p);
                memcpy(Y, row + (size_t)ix * pixel, pixel);
                Y += pixel;
            }
        }
    }
}

int32_t tvmk_resize_nearest_f32(const float *X, float *Y,
                                const struct tvmk_resize_nearest_params *params,
                                void *resource_handle)
{
    (void)resource_handle;
    if (!tvmk_resize_check(X, Y, params)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    tvmk_resize_copy((const unsigned char *)X, (unsigned char *)Y, params, sizeof(float));
    return TVM_DEVICE_OK;
}

int32_t tvmk_resize_nearest_s8(const int8_t *X, int8_t *Y,
                               const struct tvmk_resize_nearest_params *params,
                               void *resource_handle)
{
    (void)resource_handle;
    if (!tvmk_resize_check(X, Y, params)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    tvmk_resize_copy((const unsigned char *)X, (unsigned char *)Y, params, 1);
    return TVM_DEVICE_OK;
}

int32_t tvmk_resize_nearest_s16(const int16_t *X, int16_t *Y,
                                const struct tvmk_resize_nearest_params *params,
                                void *resource_handle)
{
    (void)resource_handle;
    if (!tvmk_resize_check(X, Y, params)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    tvmk_resize_copy((const unsigned char *)X, (unsigned char *)Y, params, sizeof(int16_t));
    return TVM_DEVICE_OK;
}
