/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable gemm with a 4-bit block-quantised B (struct tvmk_q4c32):
 * Y = alpha * A @ op(B) + beta * C, op(B) being the K x N matrix the N quantised rows of
 * K values stand for. Accumulates into Y one block of one row of B at a time,
 * dequantising each weight where it is used (no buffer, no scratch).
 */
#include <stddef.h>

#include "tvmk_portable.h"

static float bf16_to_f32(uint16_t bits)
{
    union {
        uint32_t u;
        float f;
    } v;

    v.u = (uint32_t)bits << 16;
    return v.f;
}

int32_t tvmk_gemm_q4c32_f32(const float *A, const struct tvmk_q4c32 *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle)
{
    int32_t M, N, K, bl, n, m, b, i;

    (void)resource_handle;
    if (A == NULL || B == NULL || Y == NULL || params == NULL || B->data == NULL ||
        B->scales == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    M = params->M;
    N = params->N;
    K = params->K;
    bl = B->block;
    if (params->trans_a || B->n != N || B->k != K || bl <= 0 || K % bl != 0 || bl % 2 != 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (m = 0; m < M; m++) {
        for (n = 0; n < N; n++) {
            Y[(size_t)m * (size_t)N + (size_t)n] = 0.0f;
        }
    }
    for (n = 0; n < N; n++) {
        const uint8_t *row = B->data + (size_t)n * (size_t)(K / 2);
        const uint16_t *scales = B->scales + (size_t)n * (size_t)(K / bl);

        for (b = 0; b < K / bl; b++) {
            const float scale = bf16_to_f32(scales[b]);
            const uint8_t *bytes = row + (size_t)b * (size_t)(bl / 2);

            for (m = 0; m < M; m++) {
                const float *a = A + (size_t)m * (size_t)K + (size_t)b * (size_t)bl;
                float acc = 0.0f;

                for (i = 0; i < bl / 2; i++) {
                    acc += a[2 * i] * ((float)((int32_t)(bytes[i] & 0x0F) - 8) * scale);
                    acc += a[2 * i + 1] * ((float)((int32_t)(bytes[i] >> 4) - 8) * scale);
                }
                Y[(size_t)m * (size_t)N + (size_t)n] += acc;
            }
        }
    }
    for (m = 0; m < M; m++) {
        for (n = 0; n < N; n++) {
            float v = params->alpha * Y[(size_t)m * (size_t)N + (size_t)n];

            if (C != NULL) {
                v += params->beta * C[(size_t)m * (size_t)params->c_stride_m +
                                      (size_t)n * (size_t)params->c_stride_n];
            }
            Y[(size_t)m * (size_t)N + (size_t)n] = v;
        }
    }
    return TVM_DEVICE_OK;
}
