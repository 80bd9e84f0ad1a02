/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: LogSoftmax (ONNX; TFLite's LOG_SOFTMAX) over the middle axis of
 * an outer x axis x inner view (tvmk_softmax_params): x - max - log(sum(exp(x - max)))
 * along the axis, in float as TFLM computes it. The inner dimension is processed in chunks
 * of 16 columns (one 64-byte local array each for the maxima and the logs of the sums);
 * output may alias input (each element is read before it is overwritten at the same
 * position).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

#define TVMK_LOG_SOFTMAX_CHUNK 16

int32_t tvmk_log_softmax_f32(const float *input, float *output,
                             const struct tvmk_softmax_params *params, void *resource_handle)
{
    float maxv[TVMK_LOG_SOFTMAX_CHUNK];
    float sum[TVMK_LOG_SOFTMAX_CHUNK];
    int32_t axis, inner, o, a, i0, i, w;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->outer < 0 ||
        params->axis < 0 || params->inner < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    axis = params->axis;
    inner = params->inner;
    for (o = 0; o < params->outer && axis > 0; ++o) {
        const size_t base = (size_t)o * (size_t)axis * (size_t)inner;
        for (i0 = 0; i0 < inner; i0 += TVMK_LOG_SOFTMAX_CHUNK) {
            const float *x = input + base + (size_t)i0;
            float *y = output + base + (size_t)i0;
            w = inner - i0 < TVMK_LOG_SOFTMAX_CHUNK ? inner - i0 : TVMK_LOG_SOFTMAX_CHUNK;
            for (i = 0; i < w; ++i) {
                maxv[i] = x[i];
                sum[i] = 0.0f;
            }
            for (a = 1; a < axis; ++a) {
                const float *xa = x + (size_t)a * (size_t)inner;
                for (i = 0; i < w; ++i) {
                    maxv[i] = xa[i] > maxv[i] ? xa[i] : maxv[i];
                }
            }
            for (a = 0; a < axis; ++a) {
                const float *xa = x + (size_t)a * (size_t)inner;
                for (i = 0; i < w; ++i) {
                    sum[i] += expf(xa[i] - maxv[i]);
                }
            }
            for (i = 0; i < w; ++i) {
                sum[i] = logf(sum[i]);
            }
            for (a = 0; a < axis; ++a) {
                const float *xa = x + (size_t)a * (size_t)inner;
                float *ya = y + (size_t)a * (size_t)inner;
                for (i = 0; i < w; ++i) {
                    ya[i] = xa[i] - maxv[i] - sum[i];
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
