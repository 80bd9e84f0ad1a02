/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: elementwise math (ONNX Sqrt, Exp, Log, Neg, Abs, Erf, Gelu),
 * computed with C99's float functions (libm). NaN and infinities follow them: sqrt and
 * log of a negative value are NaN, log(0) is -infinity. Y may alias X (in place).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

#define TVMK_MATH_SQRT 0
#define TVMK_MATH_EXP 1
#define TVMK_MATH_LOG 2
#define TVMK_MATH_NEG 3
#define TVMK_MATH_ABS 4
#define TVMK_MATH_ERF 5

static float tvmk_math_one(int op, float x)
{
    switch (op) {
    case TVMK_MATH_SQRT:
        return sqrtf(x);
    case TVMK_MATH_EXP:
        return expf(x);
    case TVMK_MATH_LOG:
        return logf(x);
    case TVMK_MATH_NEG:
        return -x;
    case TVMK_MATH_ABS:
        return fabsf(x);
    default:
        return erff(x);
    }
}

static int32_t tvmk_math_f32(int op, const float *X, float *Y,
                             const struct tvmk_unary_params *params)
{
    int32_t i;

    if (X == NULL || Y == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        Y[i] = tvmk_math_one(op, X[i]);
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_sqrt_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                      void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_SQRT, X, Y, params);
}

int32_t tvmk_exp_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_EXP, X, Y, params);
}

int32_t tvmk_log_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_LOG, X, Y, params);
}

int32_t tvmk_neg_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_NEG, X, Y, params);
}

int32_t tvmk_abs_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_ABS, X, Y, params);
}

int32_t tvmk_erf_f32(const float *X, float *Y, const struct tvmk_unary_params *params,
                     void *resource_handle)
{
    (void)resource_handle;
    return tvmk_math_f32(TVMK_MATH_ERF, X, Y, params);
}

int32_t tvmk_gelu_f32(const float *X, float *Y, const struct tvmk_gelu_params *params,
                      void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (X == NULL || Y == NULL || params == NULL || params->count < 0 ||
        (params->approximate != 0 && params->approximate != 1)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const float x = X[i];
        if (params->approximate) {
            /* sqrt(2 / pi) */
            const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
            Y[i] = 0.5f * x * (1.0f + tanhf(inner));
        } else {
            /* 1 / sqrt(2) */
            Y[i] = 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
        }
    }
    return TVM_DEVICE_OK;
}
