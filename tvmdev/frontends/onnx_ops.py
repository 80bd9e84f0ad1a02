"""ONNX operators mapped onto tvmdev's: one small converter per operator kind, in a table.

A converter reads the node's operands and attributes through a :class:`Context` and adds
tvmdev operators to the builder; it raises :class:`Unsupported` (before adding anything)
for a variant it cannot map. A kind missing from the table is reported as unsupported.
Layouts stay NCHW; tvmdev's op table keeps ONNX's attribute names, so most attributes
pass through as written and the op table resolves them (auto_pad, 1-D windows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import TvmdevError, shown
from ..model.regions import CONCAT_MAX_INPUTS, FLOAT_MAX
from ..model.shapes import numel
from .graph import Unsupported
from .onnx_context import Context, chain, node_label, op_kind
from .onnx_fold import fold_batch_norm, squeezed
from .onnx_math import MATH_CONVERTERS, batch_norm_training, clip_bounds
from .onnx_shape_ops import SHAPE_CONVERTERS

# Operands of these converters that must be known at import (folded constants).
WINDOW_KEYS = ("strides", "pads", "dilations", "auto_pad", "kernel_shape")


def _given(ctx: Context, keys: tuple[str, ...]) -> dict[str, Any]:
    """The node's attributes among ``keys`` that it sets, as tvmdev takes them."""
    out = {k: ctx.attrs[k] for k in keys if k in ctx.attrs}
    if out.get("auto_pad") == "NOTSET":
        del out["auto_pad"]
    return out


def _spatial(ctx: Context, allowed: tuple[int, ...]) -> int:
    rank = len(ctx.shape(0))
    if rank - 2 not in allowed:
        raise Unsupported(f"{rank - 2}-D" if rank >= 3 else f"{rank}-D input")
    return rank - 2


def conv(ctx: Context) -> None:
    """Conv, 1-D or 2-D, NCHW: conv2d (group covers depthwise), attributes as written."""
    spatial = _spatial(ctx, (1, 2))
    attrs = _given(ctx, (*WINDOW_KEYS, "group"))
    ctx.b.check_steps(ctx.node.op_type, ctx.out(), attrs)
    w = ctx.shape(1)
    if len(w) == spatial + 2:
        _check_same(ctx, {"kernel_shape": list(w[2:]), **attrs}, least=-1)
    inputs: list[str | None] = [ctx.inp(0), ctx.inp(1)]
    if ctx.has(2):
        inputs.append(ctx.inp(2))
    chain(ctx, [("conv2d", inputs, attrs)])


def _same_pads(size: int, k: int, stride: int, dil: int, mode: str) -> tuple[int, int]:
    """ONNX auto_pad SAME_UPPER / SAME_LOWER / VALID pads of one dim (begin, end)."""
    if mode == "VALID":
        return 0, 0
    total = max(0, (-(-size // stride) - 1) * stride + (k - 1) * dil + 1 - size)
    small = total // 2
    return (small, total - small) if mode == "SAME_UPPER" else (total - small, small)


def _pool3d(ctx: Context, op: str, base: dict[str, Any]) -> None:
    """A 3-D pool as two 2-D ones (max and average are separable over a box window):
    over H, W with D folded into the channels, then over D with H, W folded together."""
    n, c, d, h, w = ctx.shape(0)
    k = list(ctx.attr("kernel_shape"))
    st, dil = list(ctx.attr("strides", [1] * 3)), list(ctx.attr("dilations", [1] * 3))
    pads = list(ctx.attr("pads", [0] * 6))
    mode = ctx.attr("auto_pad", "NOTSET")
    if mode != "NOTSET":
        pd = [_same_pads(s, kk, ss, dd, mode)
              for s, kk, ss, dd in zip((d, h, w), k, st, dil, strict=True)]
        pads = [p[0] for p in pd] + [p[1] for p in pd]
    if len(pads) != 6 or len(k) != 3 or len(st) != 3 or len(dil) != 3:
        raise Unsupported("window attributes of the wrong length")
    hw = {**base, "kernel_shape": k[1:], "strides": st[1:], "dilations": dil[1:],
          "pads": [pads[1], pads[2], pads[4], pads[5]]}
    first = ctx.b.fresh(f"{ctx.out()}_hw")
    chain(ctx, [("reshape", [ctx.inp(0)], {"shape": [n, c * d, h, w]}),
                (op, [], hw)], out=first)
    _, _, oh, ow = ctx.b.shapes[first]
    dd = {**base, "kernel_shape": [k[0], 1], "strides": [st[0], 1],
          "dilations": [dil[0], 1], "pads": [pads[0], 0, pads[3], 0]}
    second = ctx.b.fresh(f"{ctx.out()}_d")
    chain(ctx, [("reshape", [first], {"shape": [n, c, d, oh * ow]}),
                (op, [], dd)], out=second)
    od = ctx.b.shapes[second][2]
    chain(ctx, [("reshape", [second], {"shape": [n, c, od, oh, ow]})])


def _check_same(ctx: Context, attrs: dict[str, Any], least: int = 0) -> None:
    """ONNX pads SAME windows by (out - 1) * stride + window - in per dim, with no floor
    at 0: where that is negative (a stride larger than the window) ONNX Runtime refuses a
    MaxPool and shifts an AveragePool's windows, and a Conv's by one from -2 on (-3 for
    SAME_LOWER). Refused below ``least``: tvmdev's windows start at the first element.
    (A Conv padded by -1, a 1x1 stride-2 SAME conv of an even size, is the same as
    unpadded in ONNX Runtime: its windows start at 0.)"""
    mode = attrs.get("auto_pad", "NOTSET")
    if not mode.startswith("SAME"):
        return
    size = ctx.shape(0)[2:]
    k = attrs.get("kernel_shape") or [1] * len(size)
    st, dil = attrs.get("strides") or [1] * len(size), attrs.get("dilations") or [1] * len(size)
    for n, kk, ss, dd in zip(size, k, st, dil, strict=False):
        if (-(-n // ss) - 1) * ss + (kk - 1) * dd + 1 - n < least:
            raise Unsupported(f"auto_pad {mode} with a stride larger than the window")


def _pool(op: str) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        if len(ctx.node.output) > 1 and ctx.node.output[1]:
            raise Unsupported("Indices output")
        spatial = _spatial(ctx, (1, 2, 3))
        extra = ("ceil_mode", "count_include_pad") if op == "avgpool2d" else ("ceil_mode",)
        keys: tuple[str, ...] = WINDOW_KEYS
        if op == "avgpool2d" and ctx.opset < 19:  # dilations came with AveragePool-19
            keys = tuple(k for k in WINDOW_KEYS if k != "dilations")
        attrs = _given(ctx, (*keys, *extra))
        ctx.b.check_steps(ctx.node.op_type, ctx.out(), attrs)
        _check_same(ctx, attrs)
        if spatial == 3:
            base = {k: v for k, v in attrs.items() if k in extra}
            _pool3d(ctx, op, base)
        else:
            chain(ctx, [(op, [ctx.inp(0)], attrs)])
    convert.__doc__ = f"the {op} of 1-D, 2-D or (as two 2-D ones) 3-D windows, NCHW."
    return convert


def gemm(ctx: Context) -> None:
    """Gemm: alpha, beta, transA, transB as written; C broadcasts to [M, N]."""
    inputs: list[str | None] = [ctx.inp(0), ctx.inp(1)]
    if ctx.has(2):
        inputs.append(ctx.inp(2))
    chain(ctx, [("gemm", inputs, _given(ctx, ("alpha", "beta", "transA", "transB")))])


def _same(op: str, arity: int) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        chain(ctx, [(op, [ctx.inp(i) for i in range(arity)], {})])
    convert.__doc__ = f"{op}, numpy broadcasting and batching."
    return convert


def softmax(ctx: Context) -> None:
    """Softmax along axis (opset 13); before opset 13, over the input flattened to 2-D at
    axis (default 1): a reshape, the softmax over the last axis, and a reshape back."""
    x = ctx.shape(0)
    if not x:
        raise TvmdevError(f"Softmax writing '{ctx.out()}': its input is 0-d; ONNX's Softmax "
                          "takes at least one dim", str(ctx.g.path), hint=_hint(ctx))
    rank = len(x)
    axis = int(ctx.attr("axis", -1 if ctx.opset >= 13 else 1))
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} of a {rank}-D input")
    if ctx.opset >= 13 or axis % rank == rank - 1:
        chain(ctx, [("softmax", [ctx.inp(0)], {"axis": axis})])
        return
    axis %= rank
    chain(ctx, [("reshape", [ctx.inp(0)], {"shape": [numel(x[:axis]), numel(x[axis:])]}),
                ("softmax", [], {"axis": -1}), ("reshape", [], {"shape": list(x)})])


def reshape(ctx: Context) -> None:
    """Reshape to a shape known at import (0 copies a dim unless allowzero, -1 infers)."""
    shape = ctx.ints(1, "shape")
    if ctx.attr("allowzero", 0) and 0 in shape:
        raise Unsupported("allowzero with a 0 dim (an empty tensor)")
    chain(ctx, [("reshape", [ctx.inp(0)], {"shape": shape})])


def flatten(ctx: Context) -> None:
    """Flatten to 2-D at axis."""
    chain(ctx, [("flatten", [ctx.inp(0)], {"axis": int(ctx.attr("axis", 1))})])


def transpose(ctx: Context) -> None:
    """Transpose by perm (default: reversed dims)."""
    perm = ctx.attr("perm")
    chain(ctx, [("transpose", [ctx.inp(0)], {"perm": list(perm)} if perm is not None
                 else {})])


def cast(ctx: Context) -> None:
    """Cast of a computed float32 tensor to float32 (as functions' bodies cast to the
    input's type): a reshape to its own shape, a view. Other casts at run time are
    refused by their output's dtype, or here by their input's."""
    x = ctx.inp(0)
    if ctx.b.dtypes.get(x) != "float32":
        raise Unsupported(f"of {ctx.b.dtypes.get(x)}")
    chain(ctx, [("reshape", [x], {"shape": list(ctx.shape(0))})])


def squeeze(ctx: Context) -> None:
    """Squeeze and Unsqueeze of a computed tensor: a reshape to the static result."""
    shape = squeezed(ctx, np.broadcast_to(np.zeros((), np.uint8), ctx.shape(0))).shape
    chain(ctx, [("reshape", [ctx.inp(0)], {"shape": list(shape)})])


def global_average_pool(ctx: Context) -> None:
    """GlobalAveragePool: the mean over every dim after N, C."""
    chain(ctx, [("global_average_pool", [ctx.inp(0)], {})])


def _bound(ctx: Context, i: int, key: str) -> float | None:
    if ctx.opset < 11:
        value = ctx.attr(key)
        return None if value is None else float(value)
    if not ctx.has(i):
        return None
    v = ctx.static(i, key)
    if v.size != 1:
        raise Unsupported(f"{key} of {v.size} values")
    return float(v.ravel()[0])


def clip(ctx: Context) -> None:
    """Clip to [min, max] (attributes before opset 11, operands after: known at import,
    else read at run time); infinite bounds are float32's largest; min > max gives max
    everywhere, as in ONNX."""
    if ctx.opset >= 11 and any(ctx.has(i) and ctx.const(i) is None for i in (1, 2)):
        clip_bounds(ctx)  # a bound computed at run time
        return
    lo, hi = _bound(ctx, 1, "min"), _bound(ctx, 2, "max")
    attrs = {k: float(np.clip(v, -FLOAT_MAX, FLOAT_MAX)) for k, v in (("min", lo),
                                                                        ("max", hi))
             if v is not None}
    if "min" in attrs and "max" in attrs and attrs["min"] > attrs["max"]:
        attrs["min"] = attrs["max"]
    chain(ctx, [("clip", [ctx.inp(0)], attrs)])


def pad(ctx: Context) -> None:
    """Pad, constant mode: pads (and constant_value, axes) as attributes before opset 11,
    operands known at import after."""
    rank = len(ctx.shape(0))
    mode = ctx.attr("mode", "constant")
    if mode != "constant":
        raise Unsupported(f"mode {mode}")
    if ctx.opset < 11:
        pads, value, axes = list(ctx.attr("pads", [])), float(ctx.attr("value", 0.0)), None
    else:
        pads = ctx.ints(1, "pads")
        value = _bound(ctx, 2, "constant_value") or 0.0
        axes = ctx.ints(3, "axes") if ctx.has(3) else None
    if axes is not None:
        full = [0] * (2 * rank)
        for j, a in enumerate(axes):
            if not -rank <= a < rank or len(pads) != 2 * len(axes):
                raise Unsupported(f"axes {axes} with {len(pads)} pads")
            full[a % rank], full[a % rank + rank] = pads[j], pads[j + len(axes)]
        pads = full
    if min(pads, default=0) < 0:
        raise Unsupported("negative pads (cropping)")
    chain(ctx, [("pad", [ctx.inp(0)], {"pads": pads, "value": value})])


def concat(ctx: Context) -> None:
    """Concat along axis, of up to 16 tensors."""
    if len(ctx.node.input) > CONCAT_MAX_INPUTS:
        raise Unsupported(f"more than {CONCAT_MAX_INPUTS} inputs")
    chain(ctx, [("concat", [ctx.inp(i) for i in range(len(ctx.node.input))],
                 {"axis": int(ctx.attr("axis", 0))})])


def reduce_mean(ctx: Context) -> None:
    """ReduceMean over axes (an attribute before opset 18, an operand known at import
    after; none: every axis, or none with noop_with_empty_axes), keepdims."""
    axes = ctx.attr("axes") if ctx.opset < 18 else (ctx.ints(1, "axes") if ctx.has(1)
                                                     else None)
    keep = int(ctx.attr("keepdims", 1))
    if not axes and ctx.attr("noop_with_empty_axes", 0):
        chain(ctx, [("reshape", [ctx.inp(0)], {"shape": list(ctx.shape(0))})])
        return
    attrs: dict[str, Any] = {"keepdims": keep}
    if axes:
        attrs["axes"] = [int(a) for a in axes]
    chain(ctx, [("mean", [ctx.inp(0)], attrs)])


def _check_lengths(ctx: Context, stats: list[tuple[int, ...]]) -> None:
    """Refuse statistics that are not one value per channel of the input, each."""
    x = ctx.shape(0)
    if len(x) < 2:
        raise Unsupported(f"a {len(x)}-D input")
    if any(v != (x[1],) for v in stats):
        got = ", ".join(shown(list(v)) for v in stats)
        raise TvmdevError(f"BatchNormalization {node_label(ctx.node, ctx.index)}: scale, B, "
                          f"mean and var must each be 1-D with one value per channel "
                          f"({x[1]}: input {shown(list(x))}); their shapes are {got}",
                          str(ctx.g.path), hint=_hint(ctx))


def _hint(ctx: Context) -> str | None:
    """The builder's hint for the node's kind (the ONNX operator's page)."""
    return ctx.b.hint_for(op_kind(ctx.node))


def _check_stats(ctx: Context, stats: list[np.ndarray], denom: np.ndarray) -> None:
    """Refuse statistics whose scale and shift are not finite, naming the node: a value
    that is not finite, or var + epsilon <= 0 (no real square root, or a division by 0)."""
    what = f"BatchNormalization {node_label(ctx.node, ctx.index)}"
    for name, v in zip(("scale", "B", "mean", "var"), stats, strict=True):
        if not np.isfinite(v).all():
            raise TvmdevError(f"{what}: {name} has values that are not finite (NaN or "
                              "infinity)", str(ctx.g.path))
    if (denom <= 0).any():
        i = int(np.argmax(np.ravel(denom) <= 0))
        raise TvmdevError(f"{what}: var + epsilon is {'negative' if denom.flat[i] < 0 else 0}"
                          f" ({denom.flat[i]:g} at channel {i}); scale / sqrt(var + epsilon)"
                          " has no finite value", str(ctx.g.path),
                          hint="a variance is never negative: check how the model was "
                               "exported")


def _batch_norm_computed(ctx: Context, eps: float) -> None:
    """BatchNormalization with statistics computed at run time: (X - mean) /
    sqrt(var + epsilon) * scale + B, each statistic viewed as [C, 1, ...]."""
    x = ctx.shape(0)
    per = [x[1]] + [1] * (len(x) - 2)
    out = ctx.out()
    scale, bias, mean, var = (
        chain(ctx, [("reshape", [ctx.inp(i)], {"shape": per})], out=ctx.b.fresh(f"{out}_{k}"))
        for i, k in zip(range(1, 5), ("scale", "B", "mean", "var"), strict=True))
    e = ctx.b.constant(ctx.b.fresh(f"{out}_epsilon"), np.full(per, eps, np.float32))
    root = chain(ctx, [("add", [var, e], {}), ("sqrt", [], {})], out=ctx.b.fresh(f"{out}_std"))
    chain(ctx, [("sub", [ctx.inp(0), mean], {}), ("div", [root], {}), ("mul", [scale], {}),
                ("add", [bias], {})])


def batch_norm(ctx: Context) -> None:
    """BatchNormalization (inference): with constant statistics, folded into the conv or
    gemm before it when that writes its input for it alone, else a mul and an add by
    per-channel constants; with computed ones, normalized at run time; training_mode by
    the batch's statistics."""
    if ctx.opset < 9 and not ctx.attr("spatial", 1):
        raise Unsupported("spatial 0")
    _check_lengths(ctx, [tuple(ctx.shape(i)) for i in range(1, 5)])
    eps = float(ctx.attr("epsilon", 1e-5))
    if ctx.attr("training_mode", 0) or any(o for o in ctx.node.output[1:]):
        batch_norm_training(ctx, eps)
        return
    if any(ctx.const(i) is None for i in range(1, 5)):
        _batch_norm_computed(ctx, eps)
        return
    stats = [ctx.static(i, "scale, B, mean and var") for i in range(1, 5)]
    with np.errstate(all="ignore"):
        scale, bias, mean, var = (v.astype(np.float64) for v in stats)
        _check_stats(ctx, [scale, bias, mean, var], var + eps)
        s = scale / np.sqrt(var + eps)
        t = bias - mean * s
        if fold_batch_norm(ctx, s, t):
            return
    x = ctx.shape(0)
    per = (x[1],) + (1,) * (len(x) - 2)
    out = ctx.out()
    ms = ctx.b.constant(ctx.b.fresh(f"{out}_scale"), s.reshape(per))
    mt = ctx.b.constant(ctx.b.fresh(f"{out}_shift"), t.reshape(per))
    chain(ctx, [("mul", [ctx.inp(0), ms], {}), ("add", [mt], {})])


CONVERTERS: dict[str, Callable[[Context], None]] = {
    "Conv": conv,
    "Gemm": gemm,
    "MatMul": _same("matmul", 2),
    "Add": _same("add", 2),
    "Mul": _same("mul", 2),
    "Sub": _same("sub", 2),
    "Div": _same("div", 2),
    "Relu": _same("relu", 1),
    "Sigmoid": _same("sigmoid", 1),
    "Tanh": _same("tanh", 1),
    "Softmax": softmax,
    "Reshape": reshape,
    "Flatten": flatten,
    "Transpose": transpose,
    "Cast": cast,
    "Squeeze": squeeze,
    "Unsqueeze": squeeze,
    "MaxPool": _pool("maxpool2d"),
    "AveragePool": _pool("avgpool2d"),
    "GlobalAveragePool": global_average_pool,
    "Clip": clip,
    "Pad": pad,
    "Concat": concat,
    "ReduceMean": reduce_mean,
    "BatchNormalization": batch_norm,
    **MATH_CONVERTERS,
    **SHAPE_CONVERTERS,
}
