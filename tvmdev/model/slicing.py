"""strided_slice (TFLite's STRIDED_SLICE; also ONNX's Slice and TFLite's SPLIT / SPLIT_V,
one op per output): its definition, shape rule, kernel params and reference.

The slice of each axis is TFLM's (``StridedSliceStartForAxis`` / ``EndForAxis``): a
negative begin or end counts from the dim's end; begin is clamped to [0, dim] (a
positive stride) or [-1, dim - 1] (a negative one), and so is end; a ``begin_mask`` bit
makes begin 0 (dim - 1), an ``end_mask`` bit end dim (-1); a ``shrink_axis_mask`` bit
takes the one element at begin and drops the axis. The output's elements are the input's
at begin, begin + stride, ... short of end, in row-major order: numpy's slicing.

The kernels copy bytes (float32, int8 alike; int8 values keep their quantization, as
TFLM's copy does): params give the offset of the first element and, for each output dim
left after merging those the input holds contiguously, its size and input stride, so
the innermost dim is one copy when its stride is 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .opdef import Attr, OpDef
from .shapes import MAX_DIMS, Shape, ShapeError, contiguous_strides, numel, padded

_MASKS = ("begin_mask", "end_mask", "shrink_axis_mask")


def axis_slices(x: Shape, attrs: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(start, stop, stride) of each input axis, as TFLM's strided_slice resolves them
    (a shrunk axis: stop = start + 1)."""
    begin, end, strides = attrs["begin"], attrs["end"], attrs["strides"] or (1,) * len(x)
    if not len(begin) == len(end) == len(strides) == len(x):
        raise ShapeError(f"strided_slice: begin, end and strides need one value per dim of "
                         f"the {len(x)}-D input, got {len(begin)}, {len(end)}, {len(strides)}")
    out = []
    for d, (size, b, e, s) in enumerate(zip(x, begin, end, strides, strict=True)):
        if s == 0:
            raise ShapeError(f"strided_slice: the stride of axis {d} is 0")
        lo, hi = (0, size) if s > 0 else (-1, size - 1)
        start = min(max(b + size if b < 0 else b, lo), hi)
        if attrs["begin_mask"] >> d & 1:
            start = 0 if s > 0 else size - 1
        if attrs["shrink_axis_mask"] >> d & 1:
            if s < 0 or not 0 <= start < size:
                raise ShapeError(f"strided_slice: axis {d} is shrunk at begin {b} with stride "
                                 f"{s}, where TFLM's kernel writes no element")
            out.append((start, start + 1, 1))
            continue
        stop = min(max(e + size if e < 0 else e, lo), hi)
        if attrs["end_mask"] >> d & 1:
            stop = size if s > 0 else -1
        out.append((start, stop, s))
    return out


def strided_slice_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape: each axis's element count, shrunk axes left out."""
    x = shapes[0]
    assert x is not None
    if len(x) > MAX_DIMS:
        raise ShapeError(f"strided_slice: at most {MAX_DIMS} dims are supported")
    out = tuple(len(range(*s)) for d, s in enumerate(axis_slices(x, attrs))
                if not attrs["shrink_axis_mask"] >> d & 1)
    if 0 in out:
        raise ShapeError(f"strided_slice: the slice is empty ({list(out)}); tvmdev needs "
                         "tensors with at least one element")
    return out


def strided_slice_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                         ) -> dict[str, Any]:
    """The kernel params: the first element's offset, then the output dims (size above 1,
    runs the input holds contiguously merged) with their input strides."""
    x = shapes[0]
    assert x is not None
    slices, steps = axis_slices(x, attrs), contiguous_strides(x)
    count = numel(out)
    offset = sum(s[0] * st for s, st in zip(slices, steps, strict=True)) if count else 0
    dims: list[list[int]] = []
    for (start, stop, s), st in zip(slices, steps, strict=True):
        n = len(range(start, stop, s))
        if n == 1:
            continue
        if dims and dims[-1][1] == n * s * st:  # the previous dim steps over this one whole
            dims[-1] = [dims[-1][0] * n, s * st]
        else:
            dims.append([n, s * st])
    dims = dims or [[1, 1]]
    return {"ndim": len(dims), "count": count, "offset": offset,
            "shape": padded([d[0] for d in dims], 1), "in_strides": padded([d[1] for d in dims])}


def strided_slice_reference(x: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """strided_slice of ``x`` by numpy's slicing."""
    slices = axis_slices(x.shape, attrs)
    index = tuple(slice(a, None if b < 0 else b, s) for a, b, s in slices)
    y = x[index]
    keep = [d for d in range(x.ndim) if not attrs["shrink_axis_mask"] >> d & 1]
    return np.asarray(y.reshape([y.shape[d] for d in keep]))


SLICE_OPS = [
    OpDef("strided_slice", ("input",), frozenset(), ("output",),
          {"begin": Attr("ints", None), "end": Attr("ints", None),
           "strides": Attr("ints", ()), **{m: Attr("int", 0) for m in _MASKS}},
          "tvmk_strided_slice_params", strided_slice_infer, strided_slice_params,
          doc="TFLite's strided slice: begin, end, strides (default 1) per dim; begin_mask,"
              " end_mask, shrink_axis_mask"),
]
