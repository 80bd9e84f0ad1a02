/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: ONNX's Resize, float32 (tvmk_resize_params), of X's last two
 * dims: nearest, linear and cubic, every coordinate transformation, exclude_outside and
 * antialias, the scales given or read at run time.
 * Each output value is the sum over its row's taps and its column's taps of the two
 * weights' product times the input value, the weights computed as they are needed (no
 * buffer). Not in place: Y must not overlap X.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

/* One output index's taps along one axis: the input position x, b = ceil(x) - 1 and
 * r = x - b in (0, 1]; taps b + start .. b - start + 1 (read clamped to [0, n - 1]), the
 * kernel's argument (t - x) * stretch, the weights divided by total. */
struct tvmk_axis_taps {
    int32_t base, start, n, outside;
    float r, stretch, total;
};

/* The input position of output index v (n input, o output, s the scale, [a, b] the
 * region of interest of tf_crop_and_resize). */
static float tvmk_position(int32_t v, int32_t n, int32_t o, float s, int32_t coord, float a,
                           float b)
{
    const float fv = (float)v;
    const float span = (float)(n - 1);
    float x;

    switch (coord) {
    case TVMK_COORD_TF_CROP_AND_RESIZE:
        return o == 1 ? 0.5f * (a + b) * span : a * span + fv * (b - a) * span / (float)(o - 1);
    case TVMK_COORD_ALIGN_CORNERS:
        return o == 1 ? 0.0f : fv * (float)(n - 1) / (float)(o - 1);
    case TVMK_COORD_ASYMMETRIC:
        return fv / s;
    case TVMK_COORD_TF_HALF_PIXEL_FOR_NN:
        return (fv + 0.5f) / s;
    case TVMK_COORD_PYTORCH_HALF_PIXEL:
        if (o == 1) {
            return 0.0f;
        }
        break;
    default:
        break;
    }
    x = (fv + 0.5f) / s - 0.5f;
    if (coord == TVMK_COORD_HALF_PIXEL_SYMMETRIC) {
        x = (float)n / 2.0f * (1.0f - (float)o / (s * (float)n)) + x;
    }
    return x;
}

/* Keys' cubic kernel with coefficient a at d. */
static float tvmk_cubic(float d, float a)
{
    d = fabsf(d);
    if (d <= 1.0f) {
        return ((a + 2.0f) * d - (a + 3.0f)) * d * d + 1.0f;
    }
    if (d < 2.0f) {
        return ((a * d - 5.0f * a) * d + 8.0f * a) * d - 4.0f * a;
    }
    return 0.0f;
}

/* The unnormalized weight of tap i (b + i) of t. */
static float tvmk_tap_weight(const struct tvmk_axis_taps *t, int32_t i,
                             const struct tvmk_resize_params *p)
{
    const float d = ((float)i - t->r) * t->stretch;
    const int32_t at = t->base + i;
    float w;

    if (p->exclude_outside && (at < 0 || at >= t->n)) {
        return 0.0f;
    }
    if (p->mode == TVMK_RESIZE_LINEAR) {
        w = 1.0f - fabsf(d);
        return w > 0.0f ? w : 0.0f;
    }
    return tvmk_cubic(d, p->cubic_a);
}

/* Output index v's taps along an axis of n inputs and o outputs at scale s, region of
 * interest [a, b]. */
static struct tvmk_axis_taps tvmk_axis(int32_t v, int32_t n, int32_t o, float s, float a,
                                       float b, const struct tvmk_resize_params *p)
{
    struct tvmk_axis_taps t;
    const float x = tvmk_position(v, n, o, s, p->coord, a, b);
    const float reach = p->mode == TVMK_RESIZE_CUBIC ? 2.0f : 1.0f;
    int32_t i;

    t.base = (int32_t)ceilf(x) - 1;
    t.r = x - (float)t.base;
    t.n = n;
    t.outside = p->coord == TVMK_COORD_TF_CROP_AND_RESIZE && (x < 0.0f || x > (float)(n - 1));
    t.stretch = p->antialias && s < 1.0f ? s : 1.0f;
    t.start = p->mode == TVMK_RESIZE_NEAREST ? 0 : (int32_t)floorf(-reach / t.stretch) + 1;
    t.total = 1.0f;
    if (p->mode != TVMK_RESIZE_NEAREST && (p->antialias || p->exclude_outside)) {
        t.total = 0.0f;
        for (i = t.start; i <= 1 - t.start; ++i) {
            t.total += tvmk_tap_weight(&t, i, p);
        }
    }
    return t;
}

static int32_t tvmk_clamp(int32_t i, int32_t n)
{
    return i < 0 ? 0 : i > n - 1 ? n - 1 : i;
}

/* The input index nearest mode picks for t. */
static int32_t tvmk_nearest_index(const struct tvmk_axis_taps *t,
                                  const struct tvmk_resize_params *p)
{
    int32_t up;

    switch (p->nearest_mode) {
    case TVMK_NEAREST_ROUND_PREFER_FLOOR:
        up = t->r > 0.5f;
        break;
    case TVMK_NEAREST_ROUND_PREFER_CEIL:
        up = t->r >= 0.5f;
        break;
    case TVMK_NEAREST_FLOOR:
        up = t->r == 1.0f;
        break;
    default:
        up = 1;
        break;
    }
    return tvmk_clamp(t->base + up, t->n);
}

/* One output value of the H x W plane x at taps ty (rows), tx (columns). */
static float tvmk_resize_value(const float *x, int32_t w, const struct tvmk_axis_taps *ty,
                               const struct tvmk_axis_taps *tx,
                               const struct tvmk_resize_params *p)
{
    float sum = 0.0f;
    size_t at;
    int32_t i, j;

    if (ty->outside || tx->outside) {
        return p->extrapolation_value;
    }
    if (p->mode == TVMK_RESIZE_NEAREST) {
        at = (size_t)tvmk_nearest_index(ty, p) * (size_t)w + (size_t)tvmk_nearest_index(tx, p);
        sum = x[at];
        return sum;
    }
    for (i = ty->start; i <= 1 - ty->start; ++i) {
        const float wy = tvmk_tap_weight(ty, i, p) / ty->total;
        const float *row = x + (size_t)tvmk_clamp(ty->base + i, ty->n) * (size_t)w;
        float across = 0.0f;
        if (wy == 0.0f) {
            continue;
        }
        for (j = tx->start; j <= 1 - tx->start; ++j) {
            across += tvmk_tap_weight(tx, j, p) / tx->total * row[tvmk_clamp(tx->base + j, tx->n)];
        }
        sum += wy * across;
    }
    return sum;
}

/* A scale read at run time, checked: positive and giving the output's length o from n. */
static int32_t tvmk_run_scale(float s, int32_t n, int32_t o)
{
    const float f = s * (float)n;
    return s > 0.0f && f >= (float)o && f < (float)o + 1.0f;
}

/* The scales: given, or read from the operand and checked. */
static int32_t tvmk_resize_scales(const float *scales, const struct tvmk_resize_params *p,
                                  float *sh, float *sw)
{
    int32_t k;

    *sh = p->scale_h;
    *sw = p->scale_w;
    if (scales == NULL) {
        return p->scale_h > 0.0f && p->scale_w > 0.0f;
    }
    if (p->index_h < 0 || p->index_h >= p->scales_count || p->index_w < 0 ||
        p->index_w >= p->scales_count) {
        return 0;
    }
    for (k = 0; k < p->scales_count; ++k) {
        if (k != p->index_h && k != p->index_w && scales[k] != 1.0f) {
            return 0;
        }
    }
    *sh = scales[p->index_h];
    *sw = scales[p->index_w];
    return tvmk_run_scale(*sh, p->H, p->OH) && tvmk_run_scale(*sw, p->W, p->OW);
}

int32_t tvmk_resize_f32(const float *X, const float *scales, float *Y,
                        const struct tvmk_resize_params *params, void *resource_handle)
{
    const struct tvmk_resize_params *p = params;
    float sh, sw;
    int32_t b, y, x;

    (void)resource_handle;
    if (X == NULL || Y == NULL || p == NULL || p->outer < 0 || p->H < 1 || p->W < 1 ||
        p->OH < 1 || p->OW < 1 || p->mode < TVMK_RESIZE_NEAREST ||
        p->mode > TVMK_RESIZE_CUBIC || !tvmk_resize_scales(scales, p, &sh, &sw)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (b = 0; b < p->outer; ++b) {
        const float *plane = X + (size_t)b * (size_t)p->H * (size_t)p->W;
        for (y = 0; y < p->OH; ++y) {
            const struct tvmk_axis_taps ty =
                tvmk_axis(y, p->H, p->OH, sh, p->roi_h_start, p->roi_h_end, p);
            for (x = 0; x < p->OW; ++x) {
                const struct tvmk_axis_taps tx =
                    tvmk_axis(x, p->W, p->OW, sw, p->roi_w_start, p->roi_w_end, p);
                *Y++ = tvmk_resize_value(plane, p->W, &ty, &tx, p);
            }
        }
    }
    return TVM_DEVICE_OK;
}
