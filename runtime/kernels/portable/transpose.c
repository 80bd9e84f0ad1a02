/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Transpose (ONNX), float32: the walk of transpose.h over
 * 4-byte elements. Not in place: transposed must not overlap data.
 */
#include <stddef.h>

#include "transpose.h"
#include "tvmk_portable.h"

int32_t tvmk_transpose_f32(const float *data, float *transposed,
                           const struct tvmk_transpose_params *params, void *resource_handle)
{
    int32_t idx[TVMK_MAX_DIMS];

    (void)resource_handle;
    if (data == NULL || transposed == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->ndim < 0 || params->ndim > TVMK_MAX_DIMS || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->count == 0) {
        return TVM_DEVICE_OK;
    }
    if (params->ndim == 0) {
        transposed[0] = data[0];
        return TVM_DEVICE_OK;
    }
    if (params->shape[params->ndim - 1] <= 0) {
        return TVM_DEVICE_OK;
    }
    tvmk_transpose_walk((const unsigned char *)data, (unsigned char *)transposed,
                        sizeof(float), params, idx);
    return TVM_DEVICE_OK;
}
