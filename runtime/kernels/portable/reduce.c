/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: ReduceMax, ReduceMin, ReduceSum and ReduceProd (ONNX) over
 * some dims, laid out as tvmk_mean_params says (its reduced field unused). Each output
 * starts at the reduction's identity (-infinity, infinity, 0, 1); the input is read once,
 * in order, each element folded into its output (an odometer tracks the output offset
 * through out_strides). Max and min propagate NaN, as numpy does. reduced must not
 * overlap data.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

#define TVMK_REDUCE_MAX 0
#define TVMK_REDUCE_MIN 1
#define TVMK_REDUCE_SUM 2
#define TVMK_REDUCE_PROD 3

static float tvmk_reduce_identity(int op)
{
    switch (op) {
    case TVMK_REDUCE_MAX:
        return -INFINITY;
    case TVMK_REDUCE_MIN:
        return INFINITY;
    case TVMK_REDUCE_SUM:
        return 0.0f;
    default:
        return 1.0f;
    }
}

static float tvmk_reduce_one(int op, float acc, float x)
{
    switch (op) {
    case TVMK_REDUCE_MAX:
        return (x > acc || isnan(x)) && !isnan(acc) ? x : acc;
    case TVMK_REDUCE_MIN:
        return (x < acc || isnan(x)) && !isnan(acc) ? x : acc;
    case TVMK_REDUCE_SUM:
        return acc + x;
    default:
        return acc * x;
    }
}

static int32_t tvmk_reduce_f32(int op, const float *data, float *reduced,
                               const struct tvmk_mean_params *p)
{
    int32_t idx[TVMK_MAX_DIMS];
    int32_t d, i;
    size_t off = 0;

    if (data == NULL || reduced == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ndim < 0 || p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->out_count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->out_count; ++i) {
        reduced[i] = tvmk_reduce_identity(op);
    }
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (i = 0; i < p->count; ++i) {
        reduced[off] = tvmk_reduce_one(op, reduced[off], data[i]);
        for (d = p->ndim - 1; d >= 0; --d) {
            off += (size_t)p->out_strides[d];
            if (++idx[d] < p->shape[d]) {
                break;
            }
            off -= (size_t)p->out_strides[d] * (size_t)p->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_reduce_max_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_reduce_f32(TVMK_REDUCE_MAX, data, reduced, params);
}

int32_t tvmk_reduce_min_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_reduce_f32(TVMK_REDUCE_MIN, data, reduced, params);
}

int32_t tvmk_reduce_sum_f32(const float *data, float *reduced,
                            const struct tvmk_mean_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_reduce_f32(TVMK_REDUCE_SUM, data, reduced, params);
}

int32_t tvmk_reduce_prod_f32(const float *data, float *reduced,
                             const struct tvmk_mean_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_reduce_f32(TVMK_REDUCE_PROD, data, reduced, params);
}
