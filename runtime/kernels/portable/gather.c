/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Gather (ONNX) of float32 data at int32 indices along one
 * axis. Every index is checked before anything is written: one outside
 * [-axis_size, axis_size) makes the call TVM_DEVICE_ERR_INVALID (ONNX leaves it an
 * error). output must not overlap data.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_gather_f32(const float *data, const int32_t *indices, float *output,
                        const struct tvmk_gather_params *params, void *resource_handle)
{
    const struct tvmk_gather_params *p = params;
    int32_t o, j, k;

    (void)resource_handle;
    if (data == NULL || indices == NULL || output == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->outer < 0 || p->axis_size <= 0 || p->inner < 0 || p->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (j = 0; j < p->count; ++j) {
        if (indices[j] < -p->axis_size || indices[j] >= p->axis_size) {
            return TVM_DEVICE_ERR_INVALID;
        }
    }
    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->count; ++j) {
            const int32_t at = indices[j] < 0 ? indices[j] + p->axis_size : indices[j];
            const float *src = data + ((size_t)o * (size_t)p->axis_size + (size_t)at) *
                                          (size_t)p->inner;
            float *dst = output + ((size_t)o * (size_t)p->count + (size_t)j) *
                                      (size_t)p->inner;
            for (k = 0; k < p->inner; ++k) {
                dst[k] = src[k];
            }
        }
    }
    return TVM_DEVICE_OK;
}
