// SPDX-License-Identifier: Apache-2.0
// tvmdev's Metal 3 GEMM kernel: D = A @ B on simdgroup_matrix 8 x 8 fragments. It serves
// small M and decode (M = 1), and every GPU outside MTLGPUFamilyMetal4.
//
// A is M x K and B is K x N, both float or half; D is M x N float; all row-major.
// Grid: ceil(N / TILE_N) x ceil(M / TILE_M) threadgroups of THREADS threads, that is
// SIMDGROUP_ROWS x SIMDGROUP_COLS simdgroups. Threadgroup (x, y) computes the block of D
// at rows y * TILE_M and columns x * TILE_N; its simdgroup s computes the SUB_M x SUB_N
// quadrant at ((s / SIMDGROUP_COLS) * SUB_M, (s % SIMDGROUP_COLS) * SUB_N) of that block,
// as (SUB_M / FRAG) x (SUB_N / FRAG) fragments. tvmdev/metal.py models this tiling and
// checks that every element of D is written exactly once.
//
// A and B are staged in threadgroup memory TILE_K columns (rows) at a time, with zeros
// outside the matrices, so M, N and K need not be multiples of anything. D goes through
// threadgroup memory as well: simdgroup_store writes whole 8 x 8 fragments, and only
// the part of a fragment inside D may reach device memory.
//
// The threadgroup memory is a kernel parameter ([[threadgroup(0)]]): Metal allocates
// none for it unless the host sets its size with setThreadgroupMemoryLength (see
// tvmk_metal_simdgroup_threadgroup_bytes in tvmk_metal.h).

#include <metal_stdlib>
#include <metal_simdgroup_matrix>

using namespace metal;

// Keep in step with tvmk_metal.h (TVMK_METAL_SIMDGROUP_*) and tvmdev/metal.py.
enum : uint {
    TILE_M = 32,
    TILE_N = 32,
    TILE_K = 16,
    SIMDGROUP_ROWS = 2,
    SIMDGROUP_COLS = 2,
    THREADS = 128,
    FRAG = 8,
    SUB_M = TILE_M / SIMDGROUP_ROWS,
    SUB_N = TILE_N / SIMDGROUP_COLS,
};

// The layout of struct tvmk_metal_gemm_dims (tvmk_metal.h).
struct gemm_dims {
    uint m, n, k;
};

template <typename T>
static void gemm_simdgroup(device const T *A, device const T *B, device float *D,
                           constant gemm_dims &dims, threadgroup uchar *scratch,
                           uint2 group, ushort tid, ushort sg)
{
    threadgroup T *a_tile = (threadgroup T *)scratch;        // TILE_M x TILE_K
    threadgroup T *b_tile = a_tile + TILE_M * TILE_K;         // TILE_K x TILE_N
    threadgroup float *d_tile =
        (threadgroup float *)(b_tile + TILE_K * TILE_N);      // TILE_M x TILE_N
    const uint row0 = group.y * TILE_M;
    const uint col0 = group.x * TILE_N;
    const uint sub_row = (sg / SIMDGROUP_COLS) * SUB_M;
    const uint sub_col = (sg % SIMDGROUP_COLS) * SUB_N;

    simdgroup_float8x8 acc[SUB_M / FRAG][SUB_N / FRAG];
    for (uint i = 0; i < SUB_M / FRAG; ++i) {
        for (uint j = 0; j < SUB_N / FRAG; ++j) {
            acc[i][j] = make_filled_simdgroup_matrix<float, FRAG, FRAG>(0.0f);
        }
    }

    for (uint k0 = 0; k0 < dims.k; k0 += TILE_K) {
        for (uint e = tid; e < TILE_M * TILE_K; e += THREADS) {
            const uint r = row0 + e / TILE_K;
            const uint k = k0 + e % TILE_K;
            a_tile[e] = (r < dims.m && k < dims.k) ? A[r * dims.k + k] : T(0);
        }
        for (uint e = tid; e < TILE_K * TILE_N; e += THREADS) {
            const uint k = k0 + e / TILE_N;
            const uint c = col0 + e % TILE_N;
            b_tile[e] = (k < dims.k && c < dims.n) ? B[k * dims.n + c] : T(0);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        for (uint kk = 0; kk < TILE_K; kk += FRAG) {
            simdgroup_matrix<T, FRAG, FRAG> a[SUB_M / FRAG];
            simdgroup_matrix<T, FRAG, FRAG> b[SUB_N / FRAG];
            for (uint i = 0; i < SUB_M / FRAG; ++i) {
                simdgroup_load(a[i], a_tile + (sub_row + i * FRAG) * TILE_K + kk, TILE_K);
            }
            for (uint j = 0; j < SUB_N / FRAG; ++j) {
                simdgroup_load(b[j], b_tile + kk * TILE_N + sub_col + j * FRAG, TILE_N);
            }
            for (uint i = 0; i < SUB_M / FRAG; ++i) {
                for (uint j = 0; j < SUB_N / FRAG; ++j) {
                    simdgroup_multiply_accumulate(acc[i][j], a[i], b[j], acc[i][j]);
                }
            }
        }
        // Every simdgroup is done with the tiles before they are overwritten.
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    for (uint i = 0; i < SUB_M / FRAG; ++i) {
        for (uint j = 0; j < SUB_N / FRAG; ++j) {
            simdgroup_store(acc[i][j],
                            d_tile + (sub_row + i * FRAG) * TILE_N + sub_col + j * FRAG,
                            TILE_N);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = tid; e < TILE_M * TILE_N; e += THREADS) {
        const uint r = row0 + e / TILE_N;
        const uint c = col0 + e % TILE_N;
        if (r < dims.m && c < dims.n) {
            D[r * dims.n + c] = d_tile[e];
        }
    }
}

kernel void tvmk_metal_gemm_simdgroup_f32(device const float *A [[buffer(0)]],
                                          device const float *B [[buffer(1)]],
                                          device float *D [[buffer(2)]],
                                          constant gemm_dims &dims [[buffer(3)]],
                                          threadgroup uchar *scratch [[threadgroup(0)]],
                                          uint2 group [[threadgroup_position_in_grid]],
                                          ushort tid [[thread_index_in_threadgroup]],
                                          ushort sg [[simdgroup_index_in_threadgroup]])
{
    gemm_simdgroup<float>(A, B, D, dims, scratch, group, tid, sg);
}

kernel void tvmk_metal_gemm_simdgroup_f16(device const half *A [[buffer(0)]],
                                          device const half *B [[buffer(1)]],
                                          device float *D [[buffer(2)]],
                                          constant gemm_dims &dims [[buffer(3)]],
                                          threadgroup uchar *scratch [[threadgroup(0)]],
                                          uint2 group [[threadgroup_position_in_grid]],
                                          ushort tid [[thread_index_in_threadgroup]],
                                          ushort sg [[simdgroup_index_in_threadgroup]])
{
    gemm_simdgroup<half>(A, B, D, dims, scratch, group, tid, sg);
}
