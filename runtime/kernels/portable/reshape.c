/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Reshape (ONNX). The data is unchanged, only its shape is, so this
 * is a copy of count floats: skipped when computed in place (reshaped == data), and done
 * with memmove so that overlapping buffers are safe too.
 */
#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"

int32_t tvmk_reshape_f32(const float *data, float *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle)
{
    (void)resource_handle;
    if (data == NULL || reshaped == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (reshaped != data && params->count > 0) {
        memmove(reshaped, data, (size_t)params->count * sizeof(float));
    }
    return TVM_DEVICE_OK;
}
