// SPDX-License-Identifier: Apache-2.0
// tvmdev's Metal 4 GEMM kernel: D = A @ B with mpp::tensor_ops::matmul2d on cooperative
// tensors. It serves large M on GPUs in MTLGPUFamilyMetal4 (compile with -std=metal4.0).
//
// A is M x K and B is K x N, both float or half; D is M x N float; all row-major and
// bound by the host as MTLTensors. Metal orders a tensor's extents innermost first:
// a row-major M x K matrix has extents (K, M) and strides (1, K), and a slice is
// slice<inner length, outer length>(inner offset, outer offset). Reading the extents
// the NumPy way round, (M, K), is the multi-tile bug: a dispatch of one threadgroup at
// (0, 0) still looks right, several write the wrong elements or leave some unwritten.
//
// Grid: ceil(N / TILE_N) x ceil(M / TILE_M) threadgroups of 32 * SIMDGROUPS threads,
// the number the host's pipeline requires (requiredThreadsPerThreadgroup). Threadgroup
// (x, y) writes the block of D at rows y * TILE_M and columns x * TILE_N; at the ragged
// edges the tensor's extents clip it. tvmdev/metal.py models this tiling and checks that
// every element of D is written exactly once.

#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>

using namespace metal;
using namespace mpp::tensor_ops;

// Keep in step with tvmk_metal.h (TVMK_METAL_MATMUL2D_*) and tvmdev/metal.py.
enum : int {
    TILE_M = 64,
    TILE_N = 32,
    SIMDGROUPS = 4,
};

// A matrix bound from the host. The element type carries no const: matmul2d does not
// accept const-qualified tensor elements.
template <typename T>
using matrix = tensor<device T, dextents<int32_t, 2>>;

template <typename T>
static void gemm_matmul2d(matrix<T> A, matrix<T> B, matrix<float> D, uint2 group)
{
    // K is a dynamic extent: one pipeline serves every K, which the op reads from the
    // tensors' extents.
    constexpr auto desc = matmul2d_descriptor(TILE_M, TILE_N, dynamic_length_v<int32_t>);
    matmul2d<desc, execution_simdgroups<SIMDGROUPS>> op;

    const int32_t row = int32_t(group.y) * TILE_M;
    const int32_t col = int32_t(group.x) * TILE_N;
    // Innermost first: TILE_M rows of A with all of K, TILE_N columns of B with all of
    // K, and the TILE_M x TILE_N block of D at (row, col).
    auto a = A.template slice<dynamic_length_v<int32_t>, TILE_M>(0, row);
    auto b = B.template slice<TILE_N, dynamic_length_v<int32_t>>(col, 0);
    auto d = D.template slice<TILE_N, TILE_M>(col, row);
    op.run(a, b, d);
}

kernel void tvmk_metal_gemm_matmul2d_f32(matrix<float> A [[buffer(0)]],
                                         matrix<float> B [[buffer(1)]],
                                         matrix<float> D [[buffer(2)]],
                                         uint2 group [[threadgroup_position_in_grid]])
{
    gemm_matmul2d<float>(A, B, D, group);
}

kernel void tvmk_metal_gemm_matmul2d_f16(matrix<half> A [[buffer(0)]],
                                         matrix<half> B [[buffer(1)]],
                                         matrix<float> D [[buffer(2)]],
                                         uint2 group [[threadgroup_position_in_grid]])
{
    gemm_matmul2d<half>(A, B, D, group);
}
