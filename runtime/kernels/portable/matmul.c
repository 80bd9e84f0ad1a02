/*
 * tvmdev portable kernels: MatMul (ONNX), batched Y[b] = A[b] @ B[b].
 *
 * Each batch is one call of the blocked Gemm kernel (alpha 1, no C, no transposes) with
 * this call's scratch, so MatMul runs at Gemm's speed. A batch stride of 0 broadcasts one matrix to every batch.
 */
#include <stddef.h>

#include "tvmk_portable.h"

int32_t tvmk_matmul_f32(const float *A, const float *B, float *Y,
                        const struct tvmk_matmul_params *params, void *resource_handle)
{
    struct tvmk_gemm_params g;
    int32_t b;

    if (A == NULL || B == NULL || Y == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (params->batch < 0 || params->M < 0 || params->N < 0 || params->K < 0 ||
        params->a_batch_stride < 0 || params->b_batch_stride < 0) {
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
    for (b = 0; b < params->batch; ++b) {
        const int32_t status = tvmk_gemm_f32(
            A + (size_t)b * (size_t)params->a_batch_stride,
            B + (size_t)b * (size_t)params->b_batch_stride, NULL,
            Y + (size_t)b * (size_t)params->M * (size_t)params->N, &g, resource_handle);
        if (status != TVM_DEVICE_OK) {
            return status;
        }
    }
    return TVM_DEVICE_OK;
}
