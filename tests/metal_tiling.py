"""A model of both Metal GEMM kernels' tiling, for the tests: which block of the result
each threadgroup and simdgroup writes, and where it lands in memory (Metal orders a
tensor's extents innermost first). It follows the index arithmetic of the kernels in
``runtime/metal``; the tests check that every element is written exactly once, for
ragged shapes too, and that the model catches deliberately wrong grids."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tvmdev.plan.metal import (
    MATMUL2D_TILING,
    SIMDGROUP_TILING,
    GemmKernel,
    Matmul2dTiling,
    SimdgroupTiling,
    gemm_grid,
)


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
