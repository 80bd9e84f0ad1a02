/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernels of the built-in "kleidiai" device kind, in tvmdev's calling convention
 * (tvmk_portable.h). resource_handle is the tvm_device_kleidiai_t.
 */
#ifndef TVMDEV_KAI_KERNELS_H_
#define TVMDEV_KAI_KERNELS_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

int32_t tvmdev_kai_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle);
int32_t tvmdev_kai_gemm_q4c32_f32(const float *A, const struct tvmk_q4c32 *B, const float *C,
                                  float *Y, const struct tvmk_gemm_params *params,
                                  void *resource_handle);
int32_t tvmdev_kai_fully_connected_f32(const float *input, const float *weights,
                                       const float *bias, float *output,
                                       const struct tvmk_fully_connected_params *params,
                                       void *resource_handle);
int32_t tvmdev_kai_matmul_f32(const float *A, const float *B, float *Y,
                              const struct tvmk_matmul_params *params, void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMDEV_KAI_KERNELS_H_ */
