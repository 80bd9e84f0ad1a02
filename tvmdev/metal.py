"""Apple Metal GEMM offload: the dispatch rule, and a model of both kernels' tiling.

Pure functions. The C in ``templates/metal/tvmk_metal.h`` states the same dispatch rule
and grids for the host code; ``templates/metal/*.metal`` holds the kernels this module
models. ``tests/test_metal.py`` checks that the three agree, and that every element of
the result is written exactly once, for ragged shapes too.

The model follows the index arithmetic of the kernels: which threadgroups the host
dispatches (the grid), which block of the result each threadgroup and simdgroup owns,
and where a tensor slice lands in memory (Metal orders a tensor's extents innermost
first). A write is the block of the result whose values one threadgroup (or simdgroup)
computes, with the memory offsets it stores them at.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .boards import Board
from .errors import TvmdevError
from .yamlio import where_of

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
    offload = board.raw.get("offload")
    if offload is None:
        return None
    gemm = offload.get("gemm") if isinstance(offload, dict) else None
    if not isinstance(gemm, dict) or "metal_crossover_m" not in gemm:
        return None
    value = gemm["metal_crossover_m"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TvmdevError("metal_crossover_m must be a positive integer",
                          where_of(gemm, "metal_crossover_m"),
                          hint="the smallest M at which matmul2d is faster")
    return value


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
        return self.tile_m // self.simdgroup_rows

    @property
    def sub_n(self) -> int:
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


@dataclass(frozen=True)
class Write:
    """A block of D that one threadgroup (for the simdgroup kernel: one of its
    simdgroups) writes: the values of rows x cols, each stored at memory offset
    ``row * row_stride + col * col_stride``. A row-major D stores them at strides
    (n, 1); a tensor read the NumPy way round stores them at (1, m)."""

    threadgroup: tuple[int, int]
    simdgroup: int | None
    rows: range
    cols: range
    row_stride: int
    col_stride: int

    def elements(self) -> Iterator[tuple[int, int]]:
        """(row, column) of each value written."""
        for r in self.rows:
            for c in self.cols:
                yield r, c

    def offsets(self) -> np.ndarray:
        """The memory offset each value is stored at, in the order of :meth:`elements`."""
        r = np.arange(self.rows.start, self.rows.stop, dtype=np.int64)[:, None]
        c = np.arange(self.cols.start, self.cols.stop, dtype=np.int64)[None, :]
        return (r * self.row_stride + c * self.col_stride).ravel()


def _span(start: int, length: int, extent: int, clip: bool) -> range:
    return range(start, min(start + length, extent) if clip else start + length)


def simdgroup_matrix_writes(m: int, n: int, tiling: SimdgroupTiling = SIMDGROUP_TILING,
                            grid: tuple[int, int] | None = None) -> list[Write]:
    """What each simdgroup of each threadgroup of ``gemm_simdgroup.metal`` writes into a
    row-major m x n D: its quadrant of the threadgroup's block, only the part inside D
    when the store is bounds-checked (through threadgroup memory)."""
    gx, gy = grid if grid is not None else gemm_grid(GemmKernel.SIMDGROUP_MATRIX, m, n)
    simdgroups = tiling.simdgroup_rows * tiling.simdgroup_cols
    clip = tiling.bounds_checked
    writes = []
    for y in range(gy):
        for x in range(gx):
            for s in range(simdgroups):
                row, col = tiling.quadrant(s)
                writes.append(Write(
                    (x, y), s,
                    rows=_span(y * tiling.tile_m + row, tiling.sub_m, m, clip),
                    cols=_span(x * tiling.tile_n + col, tiling.sub_n, n, clip),
                    row_stride=n, col_stride=1))
    return writes


def matmul2d_writes(m: int, n: int, tiling: Matmul2dTiling = MATMUL2D_TILING,
                    grid: tuple[int, int] | None = None) -> list[Write]:
    """What each threadgroup of ``gemm_matmul2d.metal`` writes into a row-major m x n
    D: the tile_m x tile_n block at rows y * tile_m and columns x * tile_n, clipped by
    the tensor's extents. Innermost first, D is the tensor (n, m) with strides (1, n)
    and the slice is at (x * tile_n, y * tile_m). With ``extents_innermost_first=False``
    the kernel reads the extents the NumPy way round, (m, n), and slices at
    (y * tile_m, x * tile_n): the same elements, stored at strides (1, m), which is the
    multi-tile bug the design notes describe."""
    gx, gy = grid if grid is not None else gemm_grid(GemmKernel.MATMUL2D, m, n)
    row_stride, col_stride = (n, 1) if tiling.extents_innermost_first else (1, m)
    writes = []
    for y in range(gy):
        for x in range(gx):
            writes.append(Write(
                (x, y), None,
                rows=_span(y * tiling.tile_m, tiling.tile_m, m, True),
                cols=_span(x * tiling.tile_n, tiling.tile_n, n, True),
                row_stride=row_stride, col_stride=col_stride))
    return writes


@dataclass(frozen=True)
class Coverage:
    """How writes cover a row-major m x n D: elements never written, elements written
    more than once, values of elements outside D, and values stored at another
    element's place."""

    missing: int
    repeated: int
    outside: int
    misplaced: int
    first_missing: tuple[int, int] | None
    first_repeated: tuple[int, int] | None

    @property
    def exact(self) -> bool:
        """Every element written exactly once, with its own value, nothing else."""
        return not (self.missing or self.repeated or self.outside or self.misplaced)


def coverage(m: int, n: int, writes: list[Write]) -> Coverage:
    """Count the writes of every element of a row-major m x n D."""
    stored: list[np.ndarray] = []
    outside = misplaced = 0
    for w in writes:
        r = np.arange(w.rows.start, w.rows.stop, dtype=np.int64)[:, None]
        c = np.arange(w.cols.start, w.cols.stop, dtype=np.int64)[None, :]
        offsets = w.offsets()
        exists = ((r < m) & (c < n)).ravel()
        outside += int(exists.size - np.count_nonzero(exists))
        misplaced += int(np.count_nonzero(exists & (offsets != (r * n + c).ravel())))
        stored.append(offsets[(offsets >= 0) & (offsets < m * n)])
    counts = np.bincount(np.concatenate(stored) if stored else np.zeros(0, dtype=np.int64),
                         minlength=m * n)
    missing = np.flatnonzero(counts == 0)
    repeated = np.flatnonzero(counts > 1)

    def first(idx: np.ndarray) -> tuple[int, int] | None:
        if idx.size == 0:
            return None
        row, col = divmod(int(idx[0]), n)
        return row, col

    return Coverage(int(missing.size), int(repeated.size), outside, misplaced,
                    first(missing), first(repeated))
