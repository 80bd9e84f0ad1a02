/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Flatten (ONNX). The data is unchanged, only its shape is, so this
 * is a copy of count floats: skipped when computed in place (output == input), and done
 * with memmove so that overlapping buffers are safe too.
 */
#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"

int32_t tvmk_flatten_f32(const float *input, float *output,
                         const struct tvmk_unary_params *params, void *resource_handle)
{
    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (output != input && params->count > 0) {
        memmove(output, input, (size_t)params->count * sizeof(float));
    }
    return TVM_DEVICE_OK;
}
