/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: LayerNormalization (ONNX, float32 statistics): each row of
 * inner values normalized by its mean and variance (two passes over the row, so the
 * variance is never negative), then scaled and shifted. Y may alias X (each element is
 * read before it is written, after the row's statistics). Its InvStdDev output,
 * 1 / sqrt(var + epsilon) per row, is tvmk_inv_std_dev_f32.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

/* 1 / sqrt(var + epsilon) of the row x of n values; its mean in *mean. */
static float tvmk_row_inv_std(const float *x, int32_t n, float epsilon, float *mean)
{
    float m = 0.0f;
    float var = 0.0f;
    int32_t i;

    for (i = 0; i < n; ++i) {
        m += x[i];
    }
    m /= (float)n;
    for (i = 0; i < n; ++i) {
        const float d = x[i] - m;
        var += d * d;
    }
    *mean = m;
    return 1.0f / sqrtf(var / (float)n + epsilon);
}

int32_t tvmk_layer_norm_f32(const float *X, const float *Scale, const float *B, float *Y,
                            const struct tvmk_layer_norm_params *params,
                            void *resource_handle)
{
    const struct tvmk_layer_norm_params *p = params;
    int32_t r, i;

    (void)resource_handle;
    if (X == NULL || Scale == NULL || Y == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->outer < 0 || p->inner <= 0 || (p->scale_stride != 0 && p->scale_stride != 1) ||
        (p->bias_stride != 0 && p->bias_stride != 1)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (r = 0; r < p->outer; ++r) {
        const float *x = X + (size_t)r * (size_t)p->inner;
        float *y = Y + (size_t)r * (size_t)p->inner;
        float mean;
        const float inv = tvmk_row_inv_std(x, p->inner, p->epsilon, &mean);
        for (i = 0; i < p->inner; ++i) {
            float v = (x[i] - mean) * inv * Scale[i * p->scale_stride];
            if (B != NULL) {
                v += B[i * p->bias_stride];
            }
            y[i] = v;
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_inv_std_dev_f32(const float *X, float *Y,
                             const struct tvmk_inv_std_dev_params *params,
                             void *resource_handle)
{
    int32_t r;
    float mean;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->outer < 0 || params->inner <= 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (r = 0; r < params->outer; ++r) {
        Y[r] = tvmk_row_inv_std(X + (size_t)r * (size_t)params->inner, params->inner,
                                params->epsilon, &mean);
    }
    return TVM_DEVICE_OK;
}
