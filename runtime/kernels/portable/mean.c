/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: ReduceMean (ONNX), MEAN (TFLite) and GlobalAveragePool (ONNX):
 * the mean over some dims. The input is read once, in order, each element added to its
 * output (an odometer tracks the output offset through out_strides), then every output
 * is divided by the number of elements it sums. reduced must not overlap data.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_mean_f32(const float *data, float *reduced, const struct tvmk_mean_params *params,
                      void *resource_handle)
{
    const struct tvmk_mean_params *p = params;
    int32_t idx[TVMK_MAX_DIMS];
    int32_t d, i;
    size_t off = 0;

    (void)resource_handle;
    if (data == NULL || reduced == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ndim < 0 || p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->out_count < 0 ||
        p->reduced < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->out_count; ++i) {
        reduced[i] = 0.0f;
    }
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (i = 0; i < p->count; ++i) {
        reduced[off] += data[i];
        for (d = p->ndim - 1; d >= 0; --d) {
            off += (size_t)p->out_strides[d];
            if (++idx[d] < p->shape[d]) {
                break;
            }
            off -= (size_t)p->out_strides[d] * (size_t)p->shape[d];
            idx[d] = 0;
        }
    }
    if (p->reduced > 0) {
        for (i = 0; i < p->out_count; ++i) {
            reduced[i] /= (float)p->reduced;
        }
    }
    return TVM_DEVICE_OK;
}
