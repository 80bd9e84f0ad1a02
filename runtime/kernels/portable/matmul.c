/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: MatMul (ONNX, numpy batching), Y[i] = A[i] @ B[i].
 *
 * Each product is one call of the blocked Gemm kernel (alpha 1, no C, no transposes)
 * with this call's scratch, so MatMul runs at Gemm's speed. The batch index i runs over
 * params->shape in row-major order; an operand's batch strides are 0 along the dims it
 * broadcasts.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_matmul_f32(const float *A, const float *B, float *Y,
                        const struct tvmk_matmul_params *params, void *resource_handle)
{
    struct tvmk_gemm_params g;
    int32_t index[TVMK_MAX_BATCH_DIMS] = {0};
    int32_t batch = 1;
    int32_t b, d;

    if (A == NULL || B == NULL || Y == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->M < 0 || params->N < 0 || params->K < 0 || params->ndim < 0 ||
        params->ndim > TVMK_MAX_BATCH_DIMS) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (d = 0; d < params->ndim; ++d) {
        if (params->shape[d] < 1 || batch > INT32_MAX / params->shape[d] ||
            params->a_strides[d] < 0 || params->b_strides[d] < 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
        batch *= params->shape[d];
    }
    if (params->batch != batch) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.M = params->M;
    g.N = params->N;
    g.K = params->K;
    g.trans_a = 0;
    g.trans_b = 0;
    g.alpha = 1.0f;
    g.beta = 0.0f;
    g.c_stride_m = 0;
    g.c_stride_n = 0;
    g.b_constant = params->b_constant;
    g.scratch_bytes = params->scratch_bytes;
    g.scratch = params->scratch;
    for (b = 0; b < batch; ++b) {
        size_t a_offset = 0;
        size_t b_offset = 0;
        int32_t status;

        for (d = 0; d < params->ndim; ++d) {
            a_offset += (size_t)index[d] * (size_t)params->a_strides[d];
            b_offset += (size_t)index[d] * (size_t)params->b_strides[d];
        }
        status = tvmk_gemm_f32(A + a_offset, B + b_offset, NULL,
                               Y + (size_t)b * (size_t)params->M * (size_t)params->N, &g,
                               resource_handle);
        if (status != TVM_DEVICE_OK) {
            return status;
        }
        /* The next batch index, the last dim fastest. */
        for (d = params->ndim - 1; d >= 0 && ++index[d] == params->shape[d]; --d) {
            index[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}
