"""TFLite's slicing operators mapped onto strided_slice: STRIDED_SLICE itself, and SPLIT
and SPLIT_V, one strided_slice per output (each copies its own part of the input, so the
outputs together copy the input once).

Every bound is a constant, as TFLM requires; what TFLM's strided_slice ignores
(``ellipsis_mask``, ``new_axis_mask``, ``offset``: its Prepare zeroes them) is refused,
since a model setting them means a slice TFLM does not compute.
"""

from __future__ import annotations

from typing import Any

from .graph import Unsupported
from .tflite_context import Context

MAX_RANK = 4  # TFLM's strided_slice (kMaxDim)


def strided_slice(ctx: Context) -> None:
    """STRIDED_SLICE: constant begin, end and strides (one per dim, at most 4 dims), the
    begin, end and shrink-axis masks as attributes."""
    o = ctx.options("StridedSliceOptions")
    x = ctx.inp(0)
    rank = len(ctx.b.shapes[x])
    if rank > MAX_RANK:
        raise Unsupported(f"a {rank}-D input (TFLM's strided_slice takes at most {MAX_RANK})")
    for what in ("EllipsisMask", "NewAxisMask", "Offset"):
        if o is not None and hasattr(o, what) and getattr(o, what)():
            raise Unsupported(f"{what} set: TFLM's strided_slice ignores it and computes "
                              "another slice")
    attrs: dict[str, Any] = {"begin": ctx.ints(1, "begin"), "end": ctx.ints(2, "end"),
                             "strides": ctx.ints(3, "strides")}
    for key, field in (("begin_mask", "BeginMask"), ("end_mask", "EndMask"),
                       ("shrink_axis_mask", "ShrinkAxisMask")):
        if o is not None and getattr(o, field)():
            attrs[key] = int(getattr(o, field)())
    out = ctx.g.tensors[ctx.op.outputs[0]]
    ctx.b.emit(ctx.op.kind, "strided_slice", [x], out.cname, attrs, out.dtype, out.quant)


def _axis(ctx: Context, i: int, rank: int) -> int:
    values = ctx.ints(i, "axis")
    if len(values) != 1 or not -rank <= values[0] < rank:
        raise Unsupported(f"axis {values} of a {rank}-D input")
    return values[0] % rank


def _emit_parts(ctx: Context, x: str, axis: int, sizes: list[int]) -> None:
    """One strided_slice per output: the next sizes[j] entries along axis."""
    shape = list(ctx.b.shapes[x])
    if len(sizes) != len(ctx.op.outputs) or any(s < 0 for s in sizes) or sum(
            sizes) != shape[axis]:
        raise Unsupported(f"sizes {sizes} along axis {axis} of {shape} for "
                          f"{len(ctx.op.outputs)} outputs")
    start = 0
    for j, size in zip(ctx.op.outputs, sizes, strict=True):
        out = ctx.g.tensors[j]
        begin, end = [0] * len(shape), list(shape)
        begin[axis], end[axis] = start, start + size
        ctx.b.emit(ctx.op.kind, "strided_slice", [x], out.cname, {"begin": begin, "end": end},
                   out.dtype, out.quant)
        start += size


def split(ctx: Context) -> None:
    """SPLIT: the constant axis (operand 0) cut into as many equal parts as outputs."""
    x = ctx.inp(1)
    shape = ctx.b.shapes[x]
    axis = _axis(ctx, 0, len(shape))
    n = len(ctx.op.outputs)
    if n == 0 or shape[axis] % n:
        raise Unsupported(f"axis {axis} of {list(shape)} into {n} equal parts")
    _emit_parts(ctx, x, axis, [shape[axis] // n] * n)


def split_v(ctx: Context) -> None:
    """SPLIT_V: the constant size_splits (one of them -1: what is left) along the
    constant axis (operand 2)."""
    x = ctx.inp(0)
    shape = ctx.b.shapes[x]
    axis = _axis(ctx, 2, len(shape))
    sizes = ctx.ints(1, "size_splits")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = shape[axis] - sum(s for s in sizes if s != -1)
    _emit_parts(ctx, x, axis, sizes)


CONVERTERS = {"STRIDED_SLICE": strided_slice, "SPLIT": split, "SPLIT_V": split_v}
MULTI_OUTPUT = frozenset({"SPLIT", "SPLIT_V"})
