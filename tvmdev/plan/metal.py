"""Apple Metal GEMM offload: the dispatch rule, the kernels' tiles and grids.

Pure functions. The C in ``runtime/metal/tvmk_metal.h`` states the same dispatch rule
and grids for the host code; ``runtime/metal/*.metal`` holds the kernels.
``tests/metal_tiling.py`` models which elements each threadgroup writes, and
``tests/test_metal.py`` checks that the three agree.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..load.board import Board

SIMD_WIDTH = 32
"""Threads per simdgroup on Apple GPUs."""

THREADS_PER_THREADGROUP = 128
"""Both kernels: 4 simdgroups (the matmul2d kernel's ``execution_simdgroups<4>``), the
value of the pipeline's requiredThreadsPerThreadgroup."""

FRAGMENT = 8
"""The side of a ``simdgroup_matrix`` fragment."""


class GemmKernel(enum.Enum):
    """The kernel serving one GEMM call; values are ``enum tvmk_metal_gemm_kernel``'s."""

    PORTABLE = 0
    SIMDGROUP_MATRIX = 1
    MATMUL2D = 2


def choose_gemm_kernel(m: int, *, has_device: bool, supports_metal4: bool,
                       crossover_m: int | None) -> GemmKernel:
    """The dispatch rule: matmul2d when the device is in MTLGPUFamilyMetal4 and M is at
    least the board's crossover, else simdgroup_matrix; without a Metal device, the
    portable CPU kernel. No crossover (``None``: not measured) never picks matmul2d."""
    if not has_device:
        return GemmKernel.PORTABLE
    if supports_metal4 and crossover_m is not None and m >= crossover_m:
        return GemmKernel.MATMUL2D
    return GemmKernel.SIMDGROUP_MATRIX


def crossover_m(board: Board) -> int | None:
    """The M from which matmul2d beats simdgroup_matrix on ``board``
    (``offload: {gemm: {metal_crossover_m: M}}``), or ``None`` when the board has none."""
    return board.offload.metal_crossover_m if board.offload is not None else None


@dataclass(frozen=True)
class SimdgroupTiling:
    """The tiling of ``gemm_simdgroup.metal``: a threadgroup owns a tile_m x tile_n block
    of D, split into simdgroup_rows x simdgroup_cols quadrants, one per simdgroup."""

    tile_m: int = 32
    tile_n: int = 32
    tile_k: int = 16
    simdgroup_rows: int = 2
    simdgroup_cols: int = 2
    bounds_checked: bool = True  # D goes through threadgroup memory, stored in bounds

    @property
    def sub_m(self) -> int:
        """Rows of a simdgroup's quadrant."""
        return self.tile_m // self.simdgroup_rows

    @property
    def sub_n(self) -> int:
        """Columns of a simdgroup's quadrant."""
        return self.tile_n // self.simdgroup_cols

    def quadrant(self, simdgroup: int) -> tuple[int, int]:
        """(row, column) of a simdgroup's quadrant inside the threadgroup's block."""
        return ((simdgroup // self.simdgroup_cols) * self.sub_m,
                (simdgroup % self.simdgroup_cols) * self.sub_n)


@dataclass(frozen=True)
class Matmul2dTiling:
    """The tiling of ``gemm_matmul2d.metal``: a threadgroup of ``simdgroups`` simdgroups
    runs one matmul2d on the tile_m x tile_n slice of D at (x * tile_n, y * tile_m)."""

    tile_m: int = 64
    tile_n: int = 32
    simdgroups: int = 4
    extents_innermost_first: bool = True  # False: the NumPy reading, the multi-tile bug


SIMDGROUP_TILING = SimdgroupTiling()
MATMUL2D_TILING = Matmul2dTiling()


def gemm_grid(kernel: GemmKernel, m: int, n: int) -> tuple[int, int]:
    """Threadgroups along N and along M that cover an m x n result
    (``tvmk_metal_gemm_grid``)."""
    if kernel is GemmKernel.MATMUL2D:
        tile_m, tile_n = MATMUL2D_TILING.tile_m, MATMUL2D_TILING.tile_n
    else:
        tile_m, tile_n = SIMDGROUP_TILING.tile_m, SIMDGROUP_TILING.tile_n
    return -(-n // tile_n), -(-m // tile_m)


def simdgroup_threadgroup_bytes(element_size: int,
                                tiling: SimdgroupTiling = SIMDGROUP_TILING) -> int:
    """The simdgroup kernel's threadgroup memory: A and B tiles of ``element_size``-byte
    elements, then the float D tile, rounded up to 16 bytes
    (``tvmk_metal_simdgroup_threadgroup_bytes``)."""
    ab = (tiling.tile_m * tiling.tile_k + tiling.tile_k * tiling.tile_n) * element_size
    total = ab + tiling.tile_m * tiling.tile_n * 4
    return (total + 15) // 16 * 16
