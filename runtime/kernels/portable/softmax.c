/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Softmax (ONNX) over the middle axis of an
 * outer x axis x inner view. Numerically stable: the maximum along the axis is
 * subtracted before expf. The inner dimension is processed in chunks of 16 columns (one
 * 64-byte local array each for the maxima and the sums) so that every pass reads memory
 * contiguously; output may alias input (each element is read before it is overwritten
 * at the same position).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

#define TVMK_SOFTMAX_CHUNK 16

int32_t tvmk_softmax_f32(const float *input, float *output,
                         const struct tvmk_softmax_params *params, void *resource_handle)
{
    float maxv[TVMK_SOFTMAX_CHUNK];
    float sum[TVMK_SOFTMAX_CHUNK];
    int32_t outer, axis, inner, o, a, i0, i, w;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    outer = params->outer;
    axis = params->axis;
    inner = params->inner;
    if (outer < 0 || axis < 0 || inner < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (axis == 0) {
        return TVM_DEVICE_OK;
    }
    for (o = 0; o < outer; ++o) {
        const size_t base = (size_t)o * (size_t)axis * (size_t)inner;
        for (i0 = 0; i0 < inner; i0 += TVMK_SOFTMAX_CHUNK) {
            const float *x = input + base + (size_t)i0;
            float *y = output + base + (size_t)i0;
            w = inner - i0 < TVMK_SOFTMAX_CHUNK ? inner - i0 : TVMK_SOFTMAX_CHUNK;
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
                float *ya = y + (size_t)a * (size_t)inner;
                for (i = 0; i < w; ++i) {
                    const float e = expf(xa[i] - maxv[i]);
                    ya[i] = e;
                    sum[i] += e;
                }
            }
            for (i = 0; i < w; ++i) {
                sum[i] = 1.0f / sum[i];
            }
            for (a = 0; a < axis; ++a) {
                float *ya = y + (size_t)a * (size_t)inner;
                for (i = 0; i < w; ++i) {
                    ya[i] *= sum[i];
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
