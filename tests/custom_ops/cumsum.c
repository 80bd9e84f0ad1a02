/* SPDX-License-Identifier: Apache-2.0 */
/* tests/custom_ops/cumsum.yaml: a cumulative sum along axis[0], TFLite's CUMSUM. */
#include "tvm/device/status.h"
#include "tvmgen_op_cumulative_sum.h"

int32_t cumulative_sum_f32(const float *X, const int32_t *axis, float *Y,
                           const struct cumulative_sum_params *params, void *resource_handle)
{
    (void)resource_handle;
    int32_t a = axis[0] < 0 ? axis[0] + params->X_ndim : axis[0];
    if (a < 0 || a >= params->X_ndim) {
        return TVM_DEVICE_ERR_INVALID;
    }
    int32_t n = params->X_shape[a], inner = 1;
    for (int32_t d = a + 1; d < params->X_ndim; ++d) {
        inner *= params->X_shape[d];
    }
    const int32_t outer = params->X_count / (n * inner);
    for (int32_t o = 0; o < outer; ++o) {
        for (int32_t i = 0; i < inner; ++i) {
            float sum = 0.0f;
            for (int32_t k = 0; k < n; ++k) {
                const int32_t j = params->reverse ? n - 1 - k : k;
                const int32_t at = (o * n + j) * inner + i;
                const float v = X[at];
                if (params->exclusive) {
                    Y[at] = sum;
                    sum += v;
                } else {
                    sum += v;
                    Y[at] = sum;
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
