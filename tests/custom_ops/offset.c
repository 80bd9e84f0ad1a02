/* SPDX-License-Identifier: Apache-2.0 */
/* tests/custom_ops/offset.yaml: Y = X - zx + zy + offset, saturated to int8. */
#include "tvm/device/status.h"
#include "tvmgen_op_shift_s8.h"

int32_t shift_s8(const int8_t *X, int8_t *Y, const struct shift_s8_params *params,
                 void *resource_handle)
{
    (void)resource_handle;
    for (int32_t i = 0; i < params->X_count; ++i) {
        int32_t v = X[i] - params->X_zero_point + params->Y_zero_point + params->offset;
        Y[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    return TVM_DEVICE_OK;
}
