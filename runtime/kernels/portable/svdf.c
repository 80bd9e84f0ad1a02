/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: float32 SVDF (TFLite's), as TFLM's EvalFloatSvdfReference:
 * the state shifts one step back in time, each filter's newest slot gets the feature
 * dot product, the memory is weighted in time per filter, each unit sums its rank
 * filters plus the bias, then the fused activation.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_recurrent.h"

static float tvmk_svdf_activation(int32_t act, float v)
{
    switch (act) {
    case TVMK_ACT_RELU:
        return v > 0.0f ? v : 0.0f;
    case TVMK_ACT_RELU6:
        return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case TVMK_ACT_RELU_N1_TO_1:
        return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
    case TVMK_ACT_TANH:
        return tanhf(v);
    default:
        return v;
    }
}

int32_t tvmk_svdf_f32(const float *input, const float *weights_feature,
                      const float *weights_time, const float *bias, float *state, float *output,
                      const struct tvmk_svdf_params *params, void *resource_handle)
{
    const struct tvmk_svdf_params *p = params;
    float *per_filter;
    int32_t b, f, i, u, r, total;

    (void)resource_handle;
    if (input == NULL || weights_feature == NULL || weights_time == NULL || state == NULL
        || output == NULL || p == NULL || p->scratch == NULL
        || p->scratch_bytes < (int32_t)sizeof(float) * p->batch * p->num_filters
        || p->rank < 1 || p->num_units * p->rank != p->num_filters || p->memory_size < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    per_filter = (float *)p->scratch;
    total = p->batch * p->num_filters * p->memory_size;
    for (i = 0; i + 1 < total; i++) {
        state[i] = state[i + 1];
    }
    for (b = 0; b < p->batch; b++) {
        const float *x = input + b * p->input_size;
        float *mem = state + b * p->num_filters * p->memory_size;
        for (f = 0; f < p->num_filters; f++) {
            const float *w = weights_feature + f * p->input_size;
            const float *wt = weights_time + f * p->memory_size;
            float *slot = mem + f * p->memory_size;
            float dot = 0.0f;
            for (i = 0; i < p->input_size; i++) {
                dot += w[i] * x[i];
            }
            slot[p->memory_size - 1] = dot;
            dot = 0.0f;
            for (i = 0; i < p->memory_size; i++) {
                dot += wt[i] * slot[i];
            }
            per_filter[b * p->num_filters + f] = dot;
        }
        for (u = 0; u < p->num_units; u++) {
            float sum = bias != NULL ? bias[u] : 0.0f;
            for (r = 0; r < p->rank; r++) {
                sum += per_filter[b * p->num_filters + u * p->rank + r];
            }
            output[b * p->num_units + u] = tvmk_svdf_activation(p->activation, sum);
        }
    }
    return TVM_DEVICE_OK;
}
