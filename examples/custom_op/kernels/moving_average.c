/* SPDX-License-Identifier: Apache-2.0 */
/* The moving_average custom operator (ops.yaml): each row of X (its last axis) averaged
 * over windows of params->window values, times params->scale; with params->absolute,
 * of |x|. The row is first copied (as |x| when absolute) into the scratch the planner
 * gives the call in the workspace: X[-1] floats, as the entry's scratch rule says. */
#include <math.h>

#include "tvm/device/status.h"
#include "tvmgen_op_moving_average.h"

int32_t moving_average_f32(const float *X, float *Y, const struct moving_average_params *params,
                           void *resource_handle)
{
    (void)resource_handle;
    const int32_t len = params->X_shape[params->X_ndim - 1];
    const int32_t out = params->Y_shape[params->Y_ndim - 1];
    const int32_t rows = params->X_count / len;
    float *row = (float *)params->scratch;
    if (params->scratch_bytes < (int32_t)(len * sizeof(float))) {
        return TVM_DEVICE_DECLINED;
    }
    for (int32_t r = 0; r < rows; ++r) {
        for (int32_t i = 0; i < len; ++i) {
            const float v = X[r * len + i];
            row[i] = params->absolute ? fabsf(v) : v;
        }
        for (int32_t o = 0; o < out; ++o) {
            float sum = 0.0f;
            for (int32_t k = 0; k < params->window; ++k) {
                sum += row[o + k];
            }
            Y[r * out + o] = sum / (float)params->window * params->scale;
        }
    }
    return TVM_DEVICE_OK;
}
