"""ONNX's Slice (of a tensor computed at run time), Split and ConvTranspose mapped onto
tvmdev's strided_slice and transpose_conv2d; Resize in :mod:`.onnx_resize`.
:data:`.onnx_ops.CONVERTERS` holds these converters with the others.

Slice's bounds resolve as numpy's (and ONNX's reference) slicing does, which is TFLite's
clamping, so each becomes strided_slice's begin, end and stride (an end before the first
element an ``end_mask`` bit). Split writes one strided_slice per output.
"""

from __future__ import annotations

from typing import Any

from .graph import Unsupported
from .onnx_context import Context, chain
from .onnx_resize import resize

_INT32_MAX = (1 << 31) - 1


def _slice_attrs(shape: tuple[int, ...], index: dict[int, slice]) -> dict[str, Any]:
    """strided_slice's attributes of numpy's slices ``index`` (by axis) of ``shape``."""
    begin, end, strides, end_mask = [0] * len(shape), list(shape), [1] * len(shape), 0
    for axis, sl in index.items():
        start, stop, step = sl.indices(shape[axis])
        begin[axis], strides[axis] = start, step
        if stop < 0:  # before the first element: only a mask says it
            end_mask |= 1 << axis
            end[axis] = 0
        else:
            end[axis] = stop
    attrs: dict[str, Any] = {"begin": begin, "end": end, "strides": strides}
    if end_mask:
        attrs["end_mask"] = end_mask
    return attrs


def slice_computed(ctx: Context) -> None:
    """Slice of a tensor computed at run time: starts, ends, axes and steps known at
    import (attributes before opset 10)."""
    shape = ctx.shape(0)
    if ctx.opset < 10:
        starts, ends = list(ctx.attr("starts")), list(ctx.attr("ends"))
        axes, steps = ctx.attr("axes"), None
    else:
        starts, ends = ctx.ints(1, "starts"), ctx.ints(2, "ends")
        axes = ctx.ints(3, "axes") if ctx.has(3) else None
        steps = ctx.ints(4, "steps") if ctx.has(4) else None
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    if not len(axes) == len(starts) == len(ends) == len(steps):
        raise Unsupported("starts, ends, axes and steps of different lengths")
    index: dict[int, slice] = {}
    for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
        if not -len(shape) <= a < len(shape) or st == 0 or a % len(shape) in index:
            raise Unsupported(f"axis {a}" if st else "a step of 0")
        clamp = [max(-_INT32_MAX, min(_INT32_MAX, int(v))) for v in (s, e, st)]
        index[a % len(shape)] = slice(*clamp)
    chain(ctx, [("strided_slice", [ctx.inp(0)], _slice_attrs(shape, index))])


def _split_sizes(ctx: Context, size: int) -> list[int]:
    n = len(ctx.node.output)
    given = ctx.attr("split") if ctx.opset < 13 else (
        ctx.ints(1, "split") if ctx.has(1) else None)
    if given is not None:
        return [int(s) for s in given]
    if ctx.opset >= 18 and ctx.attr("num_outputs") is not None:
        chunk = -(-size // int(ctx.attr("num_outputs")))
        return [min(chunk, size - k * chunk) for k in range(int(ctx.attr("num_outputs")))]
    if size % n:
        raise Unsupported(f"{size} into {n} equal parts")
    return [size // n] * n


def split(ctx: Context) -> None:
    """Split along axis: the split sizes known at import (or equal parts; opset 18's
    num_outputs, the last part the smaller)."""
    shape = ctx.shape(0)
    axis = int(ctx.attr("axis", 0))
    if not -len(shape) <= axis < len(shape):
        raise Unsupported(f"axis {axis} of a {len(shape)}-D tensor")
    axis %= len(shape)
    sizes = _split_sizes(ctx, shape[axis])
    if len(sizes) != len(ctx.node.output) or sum(sizes) != shape[axis] or min(sizes) < 1:
        raise Unsupported(f"sizes {sizes} of {shape[axis]} for {len(ctx.node.output)} outputs")
    x, start = ctx.inp(0), 0
    for j, size in enumerate(sizes):
        if ctx.node.output[j]:
            chain(ctx, [("strided_slice", [x], _slice_attrs(
                shape, {axis: slice(start, start + size, 1)}))], out=ctx.out(j))
        start += size


def _window(ctx: Context, sd: int) -> dict[str, list[int] | None]:
    """ConvTranspose's window attributes as 2-D lists (a 1-D one's as H = 1)."""
    def two(key: str, fill: int) -> list[int] | None:
        v = ctx.attr(key)
        if v is None:
            return None
        v = [int(x) for x in v]
        if key == "pads":
            return v if sd == 2 else [0, v[0], 0, v[1]] if len(v) == 2 else v
        if key == "output_shape":
            return v[-2:] if sd == 2 else [1, v[-1]]
        return v if sd == 2 else [fill, *v]
    return {"strides": two("strides", 1) or [1, 1], "dilations": two("dilations", 1) or [1, 1],
            "output_padding": two("output_padding", 0) or [0, 0], "pads": two("pads", 0),
            "output_shape": two("output_shape", 1)}


def _tconv_pads(ctx: Context, spatial: list[int], k: list[int],
                win: dict[str, list[int] | None]) -> list[int]:
    """transpose_conv2d's pads [top, left, bottom, right] of ConvTranspose's pads,
    auto_pad, output_padding and output_shape (as ONNX's reference resolves them)."""
    strides, dil, extra = win["strides"], win["dilations"], win["output_padding"]
    assert strides is not None and dil is not None and extra is not None
    mode = ctx.attr("auto_pad", "NOTSET")
    out = win["output_shape"]
    if any(len(v) != 2 for v in (strides, dil, extra)) or min(strides + dil) < 1:
        raise Unsupported("strides, dilations or output_padding not one value >= 1 per dim")
    reach = [s * (n - 1) + e + (kk - 1) * d + 1
             for s, n, e, kk, d in zip(strides, spatial, extra, k, dil, strict=True)]
    if mode in ("SAME_UPPER", "SAME_LOWER") and win["pads"] is None:
        size = out or [n * s for n, s in zip(spatial, strides, strict=True)]
        total = [r - o for r, o in zip(reach, size, strict=True)]
        top = [t // 2 if mode == "SAME_UPPER" else t - t // 2 for t in total]
    else:
        pads = (win["pads"] or [0] * 4) if mode != "VALID" else [0] * 4
        if len(pads) != 4:
            raise Unsupported(f"pads {pads}")
        top = pads[:2]
        size = out or [r - p - q for r, p, q in zip(reach, pads[:2], pads[2:], strict=True)]
    if min(top) < 0 or len(size) != 2:
        raise Unsupported(f"a negative begin pad {top}" if min(top) < 0 else
                          f"output_shape {ctx.attr('output_shape')}")
    # the output's rows past those the input reaches are negative end pads (bias alone)
    return top + [r - e - t - o for r, e, t, o in zip(reach, extra, top, size, strict=True)]


def _as_2d(ctx: Context, i: int, shape: list[int]) -> str:
    """Operand ``i`` viewed with ``shape`` (a constant reshaped, else a reshape op)."""
    value = ctx.const(i)
    name = ctx.inp(i)
    if value is not None:
        return ctx.b.constant(ctx.b.fresh(f"{name}_2d"), value.reshape(shape))
    out = ctx.b.fresh(f"{name}_2d")
    ctx.b.emit(ctx.node.op_type, "reshape", [name], out, {"shape": shape})
    return out


def conv_transpose(ctx: Context) -> None:
    """ConvTranspose, 1-D (as 2-D with H = 1) or 2-D, NCHW, weights [C, M / group, KH, KW]
    as ONNX stores them: transpose_conv2d with strides, dilations and group as written
    and the padding (pads, auto_pad, output_padding, output_shape) resolved into begin
    and end pads."""
    x, w = list(ctx.shape(0)), list(ctx.shape(1))
    sd = len(x) - 2
    if sd not in (1, 2) or len(w) != len(x):
        raise Unsupported(f"{sd}-D")
    k = list(ctx.attr("kernel_shape", w[2:]))
    if k != w[2:]:
        raise Unsupported(f"kernel_shape {k} of weights {w}")
    win = _window(ctx, sd)
    xs, ws = (x, w) if sd == 2 else (x[:2] + [1] + x[2:], w[:2] + [1] + w[2:])
    attrs = {"strides": win["strides"], "dilations": win["dilations"],
             "pads": _tconv_pads(ctx, xs[2:], ws[2:], win), "group": int(ctx.attr("group", 1))}
    inputs: list[str | None] = [ctx.inp(0), ctx.inp(1)] if sd == 2 else [
        _as_2d(ctx, 0, xs), _as_2d(ctx, 1, ws)]
    if ctx.has(2):
        inputs.append(ctx.inp(2))
    if sd == 2:
        chain(ctx, [("transpose_conv2d", inputs, attrs)])
        return
    out = ctx.b.fresh(f"{ctx.out()}_2d")
    shape = ctx.b.emit(ctx.node.op_type, "transpose_conv2d", inputs, out, attrs)
    chain(ctx, [("reshape", [out], {"shape": [shape[0], shape[1], shape[3]]})])


SHAPE_CONVERTERS = {"Slice": slice_computed, "Split": split, "ConvTranspose": conv_transpose,
                    "Resize": resize}
