/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's built-in Metal kernel library: the GEMM of device kind "metal".
 *
 * tvmk_metal_gemm_f32 has the portable tvmk_gemm_f32's signature and semantics. Its
 * resource_handle is the tvm_device_metal_t the operator is bound to; without a Metal
 * device it returns TVM_DEVICE_DECLINED and the executor runs tvmk_gemm_f32.
 *
 * The dispatch rule and the grids below are plain C, shared by the host code
 * (tvmk_metal_gemm.m) and the tests, which compile them on any host and compare them
 * with tvmdev/metal.py.
 */
#ifndef TVMK_METAL_H_
#define TVMK_METAL_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per threadgroup of both kernels: 4 simdgroups of 32, the matmul2d kernel's
 * execution_simdgroups<4>. */
#define TVMK_METAL_THREADS 128

/* The tiles of gemm_simdgroup.metal and gemm_matmul2d.metal (TILE_M, TILE_N, TILE_K). */
#define TVMK_METAL_SIMDGROUP_TILE_M 32
#define TVMK_METAL_SIMDGROUP_TILE_N 32
#define TVMK_METAL_SIMDGROUP_TILE_K 16
#define TVMK_METAL_MATMUL2D_TILE_M 64
#define TVMK_METAL_MATMUL2D_TILE_N 32

/* A crossover M below 1 means none was measured: matmul2d is never chosen. */
#define TVMK_METAL_NO_CROSSOVER (-1)

/* The kernel that serves one GEMM call. */
enum tvmk_metal_gemm_kernel {
    TVMK_METAL_GEMM_PORTABLE = 0,         /* no Metal device: tvmk_gemm_f32 on the CPU */
    TVMK_METAL_GEMM_SIMDGROUP_MATRIX = 1, /* gemm_simdgroup.metal (Metal 3) */
    TVMK_METAL_GEMM_MATMUL2D = 2          /* gemm_matmul2d.metal (Metal 4) */
};

/* The simdgroup kernel's buffer(3). */
struct tvmk_metal_gemm_dims {
    uint32_t m, n, k;
};

/* Threadgroups along N (x) and M (y). */
struct tvmk_metal_grid {
    uint32_t x, y;
};

/*
 * The dispatch rule: matmul2d when the device is in MTLGPUFamilyMetal4 and M reaches
 * the board's crossover (TVMK_METAL_NO_CROSSOVER: never), else simdgroup_matrix;
 * without a Metal device, the portable CPU kernel. tvmdev/metal.py has the same rule.
 */
static inline enum tvmk_metal_gemm_kernel tvmk_metal_gemm_choose(int32_t m, int has_device,
                                                                 int supports_metal4,
                                                                 int32_t crossover_m)
{
    if (!has_device) {
        return TVMK_METAL_GEMM_PORTABLE;
    }
    if (supports_metal4 && crossover_m >= 1 && m >= crossover_m) {
        return TVMK_METAL_GEMM_MATMUL2D;
    }
    return TVMK_METAL_GEMM_SIMDGROUP_MATRIX;
}

/* The threadgroups that cover an m x n result with the kernel's tiles. */
static inline struct tvmk_metal_grid tvmk_metal_gemm_grid(enum tvmk_metal_gemm_kernel kernel,
                                                          int32_t m, int32_t n)
{
    const int64_t tile_m = kernel == TVMK_METAL_GEMM_MATMUL2D ? TVMK_METAL_MATMUL2D_TILE_M
                                                              : TVMK_METAL_SIMDGROUP_TILE_M;
    const int64_t tile_n = kernel == TVMK_METAL_GEMM_MATMUL2D ? TVMK_METAL_MATMUL2D_TILE_N
                                                              : TVMK_METAL_SIMDGROUP_TILE_N;
    struct tvmk_metal_grid grid;

    grid.x = (uint32_t)(((int64_t)n + tile_n - 1) / tile_n);
    grid.y = (uint32_t)(((int64_t)m + tile_m - 1) / tile_m);
    return grid;
}

/* The threadgroup memory of the simdgroup kernel, for elements of element_size bytes:
 * the A and B tiles, then the float D tile; a multiple of 16, as Metal requires. */
static inline uint32_t tvmk_metal_simdgroup_threadgroup_bytes(uint32_t element_size)
{
    const uint32_t bytes =
        (TVMK_METAL_SIMDGROUP_TILE_M * TVMK_METAL_SIMDGROUP_TILE_K +
         TVMK_METAL_SIMDGROUP_TILE_K * TVMK_METAL_SIMDGROUP_TILE_N) * element_size +
        TVMK_METAL_SIMDGROUP_TILE_M * TVMK_METAL_SIMDGROUP_TILE_N * (uint32_t)sizeof(float);

    return (bytes + 15u) & ~15u;
}

/* Y = alpha * A @ B + beta * C on the Metal device resource_handle (a
 * tvm_device_metal_t *), between its Open and Close. */
int32_t tvmk_metal_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_METAL_H_ */
