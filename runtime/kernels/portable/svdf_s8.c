/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 SVDF, TFLM's EvalIntegerSvdfReference, with time weights
 * and state of int16 (tvmk_svdf_s8_s16) or int8 (tvmk_svdf_s8). Integer arithmetic as
 * tvmdev/model/s8/svdf.py computes it.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_recurrent.h"

/* The time weights and the state, of either width. */
struct tvmk_svdf_mem {
    const int16_t *wt16;
    const int8_t *wt8;
    int16_t *st16;
    int8_t *st8;
};

static int32_t tvmk_svdf_wt(const struct tvmk_svdf_mem *m, int32_t i)
{
    return m->wt16 != NULL ? m->wt16[i] : m->wt8[i];
}

static int32_t tvmk_svdf_get(const struct tvmk_svdf_mem *m, int32_t i)
{
    return m->st16 != NULL ? m->st16[i] : m->st8[i];
}

static void tvmk_svdf_set(const struct tvmk_svdf_mem *m, int32_t i, int32_t v)
{
    if (m->st16 != NULL) {
        m->st16[i] = (int16_t)v;
    } else {
        m->st8[i] = (int8_t)v;
    }
}

/* A uint32 as the int32 of the same bits (two's complement), without overflow. */
static int32_t tvmk_svdf_i32(uint32_t v)
{
    return v < 0x80000000U ? (int32_t)v : -(int32_t)(~v) - 1;
}

static int32_t tvmk_svdf_sat(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The newest slot of every filter of batch b: the feature dot product, requantized. */
static void tvmk_svdf_feature(const struct tvmk_svdf_s8_params *p, const int8_t *input,
                              const int8_t *weights_feature, const struct tvmk_svdf_mem *m,
                              int32_t b)
{
    const int8_t *x = input + b * p->input_size;
    int32_t f, i;

    for (f = 0; f < p->num_filters; f++) {
        const int8_t *w = weights_feature + f * p->input_size;
        int32_t dot = 0;
        for (i = 0; i < p->input_size; i++) {
            dot += (int32_t)w[i] * ((int32_t)x[i] - p->input_zero_point);
        }
        dot = tvmk_multiply_by_quantized_multiplier(dot, p->scale_1_multiplier,
                                                    p->scale_1_shift);
        dot = tvmk_svdf_sat(dot, p->state_min, p->state_max);
        tvmk_svdf_set(m, (b * p->num_filters + f) * p->memory_size + p->memory_size - 1,
                      p->state_zero_point + dot);
    }
}

static int32_t tvmk_svdf_int(const int8_t *input, const int8_t *weights_feature,
                             const struct tvmk_svdf_mem *m, const int32_t *bias,
                             int8_t *output, const struct tvmk_svdf_s8_params *p)
{
    int32_t *per_filter;
    int32_t b, f, i, u, r, total;

    if (input == NULL || weights_feature == NULL || bias == NULL || output == NULL
        || p == NULL || p->scratch == NULL
        || p->scratch_bytes < (int32_t)sizeof(int32_t) * p->batch * p->num_filters
        || p->rank < 1 || p->num_units * p->rank != p->num_filters || p->memory_size < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    per_filter = (int32_t *)p->scratch;
    total = p->batch * p->num_filters * p->memory_size;
    for (i = 0; i + 1 < total; i++) {
        tvmk_svdf_set(m, i, tvmk_svdf_get(m, i + 1));
    }
    for (b = 0; b < p->batch; b++) {
        tvmk_svdf_feature(p, input, weights_feature, m, b);
        for (f = 0; f < p->num_filters; f++) {
            const int32_t base = (b * p->num_filters + f) * p->memory_size;
            uint32_t dot = 0; /* int32 as TFLM accumulates it: wrapping, here defined */
            for (i = 0; i < p->memory_size; i++) {
                dot += (uint32_t)(tvmk_svdf_wt(m, f * p->memory_size + i)
                                  * (tvmk_svdf_get(m, base + i) - p->state_zero_point));
            }
            per_filter[b * p->num_filters + f] = tvmk_svdf_i32(dot);
        }
        for (u = 0; u < p->num_units; u++) {
            uint32_t acc = (uint32_t)bias[u];
            int32_t sum;
            for (r = 0; r < p->rank; r++) {
                acc += (uint32_t)per_filter[b * p->num_filters + u * p->rank + r];
            }
            sum = tvmk_multiply_by_quantized_multiplier(tvmk_svdf_i32(acc),
                                                        p->scale_2_multiplier,
                                                        p->scale_2_shift);
            output[b * p->num_units + u] =
                (int8_t)tvmk_svdf_sat(sum + p->output_zero_point, -128, 127);
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_svdf_s8_s16(const int8_t *input, const int8_t *weights_feature,
                         const int16_t *weights_time, const int32_t *bias, int16_t *state,
                         int8_t *output, const struct tvmk_svdf_s8_params *params,
                         void *resource_handle)
{
    struct tvmk_svdf_mem m = {NULL, NULL, NULL, NULL};

    (void)resource_handle;
    if (weights_time == NULL || state == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    m.wt16 = weights_time;
    m.st16 = state;
    return tvmk_svdf_int(input, weights_feature, &m, bias, output, params);
}

int32_t tvmk_svdf_s8(const int8_t *input, const int8_t *weights_feature,
                     const int8_t *weights_time, const int32_t *bias, int8_t *state,
                     int8_t *output, const struct tvmk_svdf_s8_params *params,
                     void *resource_handle)
{
    struct tvmk_svdf_mem m = {NULL, NULL, NULL, NULL};

    (void)resource_handle;
    if (weights_time == NULL || state == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    m.wt8 = weights_time;
    m.st8 = state;
    return tvmk_svdf_int(input, weights_feature, &m, bias, output, params);
}
