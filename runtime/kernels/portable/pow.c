/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: elementwise C = A ** B with numpy broadcasting (ONNX Pow),
 * powf's results (a negative base to a non-integer power is NaN). The output is
 * produced in order, each element after its operands are read, so it may alias an
 * operand of the output's shape (computed in place).
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_pow_f32(const float *A, const float *B, float *C,
                     const struct tvmk_binary_params *params, void *resource_handle)
{
    const struct tvmk_binary_params *p = params;
    int32_t idx[TVMK_MAX_DIMS];
    int32_t d, i;
    ptrdiff_t a = 0;
    ptrdiff_t b = 0;

    (void)resource_handle;
    if (A == NULL || B == NULL || C == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ndim < 0 || p->ndim > TVMK_MAX_DIMS || p->count < 0 ||
        p->activation != TVMK_ACT_NONE) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (i = 0; i < p->count; ++i) {
        C[i] = powf(A[a], B[b]);
        /* the next output element: an odometer over the output's dims */
        for (d = p->ndim - 1; d >= 0; --d) {
            a += p->a_strides[d];
            b += p->b_strides[d];
            if (++idx[d] < p->shape[d]) {
                break;
            }
            a -= (ptrdiff_t)p->a_strides[d] * p->shape[d];
            b -= (ptrdiff_t)p->b_strides[d] * p->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
