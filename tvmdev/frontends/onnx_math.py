"""ONNX elementwise math, reductions, Gather at run time, Clip with computed bounds,
LayerNormalization and BatchNormalization's training mode, mapped onto tvmdev's float32
operators (:mod:`tvmdev.model.math_ops`).
:data:`.onnx_ops.CONVERTERS` holds these converters with the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .graph import Unsupported
from .onnx_context import Context, Step, chain


def _unary(op: str) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        chain(ctx, [(op, [ctx.inp(0)], {})])
    convert.__doc__ = f"{op} of every element."
    return convert


def gelu(ctx: Context) -> None:
    """Gelu (opset 20): approximate none (erf) or tanh."""
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"approximate {approximate}")
    chain(ctx, [("gelu", [ctx.inp(0)], {"approximate": approximate})])


def _float_operand(ctx: Context, i: int, what: str) -> str:
    """Operand ``i`` as float32: a constant of another number type converted (an integer
    exponent), a computed one as it is (float32, or refused)."""
    value = ctx.const(i)
    if value is None or value.dtype == np.float32:
        if value is None and ctx.g.dtypes.get(ctx.name(i), "float32") != "float32":
            raise Unsupported(f"{ctx.g.dtypes[ctx.name(i)]} {what} computed at run time")
        return ctx.inp(i)
    if value.dtype.kind not in "iuf":
        raise Unsupported(f"{value.dtype} {what}")
    return ctx.b.constant(ctx.b.fresh(ctx.g.cname[ctx.name(i)]), value.astype(np.float32))


def pow_(ctx: Context) -> None:
    """Pow, numpy broadcasting: a float32 base, a float32 exponent (an integer constant
    one converted)."""
    chain(ctx, [("pow", [_float_operand(ctx, 0, "base"),
                         _float_operand(ctx, 1, "exponent")], {})])


def clip_bounds(ctx: Context) -> None:
    """Clip (opset 11 on) with a bound computed at run time: each bound one value, read
    when the operator runs (constant ones as constants)."""
    ins: list[str | None] = [ctx.inp(0)]
    for i, what in ((1, "min"), (2, "max")):
        if not ctx.has(i):
            ins.append(None)
            continue
        if len(ctx.shape(i)) > 1 or int(np.prod(ctx.shape(i))) != 1:
            raise Unsupported(f"{what} of shape {list(ctx.shape(i))} (a scalar is needed)")
        ins.append(_float_operand(ctx, i, what))
    chain(ctx, [("clip_bounds", ins, {})])


def _reduce(op: str, axes_input: int) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        axes = ctx.attr("axes") if ctx.opset < axes_input else (
            ctx.ints(1, "axes") if ctx.has(1) else None)
        if not axes and ctx.attr("noop_with_empty_axes", 0):
            chain(ctx, [("reshape", [ctx.inp(0)], {"shape": list(ctx.shape(0))})])
            return
        attrs: dict[str, Any] = {"keepdims": int(ctx.attr("keepdims", 1))}
        if axes:
            attrs["axes"] = [int(a) for a in axes]
        chain(ctx, [(op, [ctx.inp(0)], attrs)])
    convert.__doc__ = (f"{op} over axes (an attribute before opset {axes_input}, an "
                       "operand known at import after; none: every axis, or none with "
                       "noop_with_empty_axes), keepdims.")
    return convert


def gather(ctx: Context) -> None:
    """Gather computed at run time (the import folds it when data and indices are both
    known): float32 data, int32 indices, an int32 model input (an int64 one taken as
    int32) or a constant, checked in range."""
    data = ctx.shape(0)
    axis = int(ctx.attr("axis", 0))
    if not data or not -len(data) <= axis < len(data):
        raise Unsupported(f"axis {axis} of a {len(data)}-D input")
    n = data[axis % len(data)]
    indices = ctx.const(1)
    if indices is None:
        if ctx.b.dtypes.get(ctx.inp(1)) != "int32":
            raise Unsupported("indices computed at run time that are not a model input")
        idx = ctx.inp(1)
    else:
        if indices.dtype.kind not in "iu":
            raise Unsupported(f"{indices.dtype} indices")
        if indices.size and (indices.min() < -n or indices.max() >= n):
            raise Unsupported(f"indices {int(indices.min())} to {int(indices.max())} out of "
                              f"range for a dim of {n}")
        idx = ctx.b.constant(ctx.g.cname[ctx.name(1)], indices, "int32")
    chain(ctx, [("gather", [ctx.inp(0), idx], {"axis": axis})])


def layer_norm(ctx: Context) -> None:
    """LayerNormalization (opset 17) of float32 statistics (stash_type 1) over the dims
    from axis; Scale and B one value or one per normalized element; its Mean output the
    mean over those dims, its InvStdDev output inv_std_dev, where read."""
    if int(ctx.attr("stash_type", 1)) != 1:
        raise Unsupported(f"stash_type {ctx.attr('stash_type')}")
    x = ctx.shape(0)
    axis = int(ctx.attr("axis", -1))
    if not x or not -len(x) <= axis < len(x):
        raise Unsupported(f"axis {axis} of a {len(x)}-D input")
    ins: list[str | None] = [ctx.inp(0), ctx.inp(1)]
    if ctx.has(2):
        ins.append(ctx.inp(2))
    attrs = {"axis": axis, "epsilon": float(ctx.attr("epsilon", 1e-5))}
    chain(ctx, [("layer_norm", ins, attrs)])
    out = ctx.node.output
    if len(out) > 1 and out[1] and ctx.g.uses.get(out[1], 0):
        chain(ctx, [("mean", [ctx.inp(0)], {"axes": list(range(axis % len(x), len(x))),
                                             "keepdims": 1})], out=ctx.out(1))
    if len(out) > 2 and out[2] and ctx.g.uses.get(out[2], 0):
        chain(ctx, [("inv_std_dev", [ctx.inp(0)], attrs)], out=ctx.out(2))


def batch_norm_training(ctx: Context, eps: float) -> None:
    """BatchNormalization with training_mode 1 (opset 14 on; .onnx_ops.batch_norm checks
    the operands): X normalized by the batch's own mean and (population) variance over
    every axis but 1; its running_mean and running_var outputs, where read, the input
    mean (var) * momentum + the batch's * (1 - momentum)."""
    if ctx.opset < 14:
        raise Unsupported(f"training mode before opset 14 (opset {ctx.opset})")
    x = ctx.shape(0)
    axes = [a for a in range(len(x)) if a != 1]
    per = [x[1]] + [1] * (len(x) - 2)
    out, fresh = ctx.out(), ctx.b.fresh

    def const(name: str, value: float, shape: list[int]) -> str:
        return ctx.b.constant(fresh(f"{out}_{name}"), np.full(shape, value, np.float32))

    reduce: Step = ("mean", [], {"axes": axes, "keepdims": 1})
    mean = chain(ctx, [("mean", [ctx.inp(0)], reduce[2])], out=fresh(f"{out}_batch_mean"))
    centered = chain(ctx, [("sub", [ctx.inp(0), mean], {})], out=fresh(f"{out}_centered"))
    var = chain(ctx, [("mul", [centered, centered], {}), reduce], out=fresh(f"{out}_batch_var"))
    std = chain(ctx, [("add", [var, const("epsilon", eps, [1] * len(x))], {}), ("sqrt", [], {})],
                out=fresh(f"{out}_std"))
    scale, bias = (chain(ctx, [("reshape", [ctx.inp(i)], {"shape": per})],
                         out=fresh(f"{out}_{k}")) for i, k in ((1, "scale"), (2, "B")))
    chain(ctx, [("div", [centered, std], {}), ("mul", [scale], {}), ("add", [bias], {})])
    momentum = float(ctx.attr("momentum", 0.9))
    for k, batch in ((1, mean), (2, var)):
        name = ctx.node.output[k] if len(ctx.node.output) > k else ""
        if not name or not ctx.g.uses.get(name, 0):
            continue
        kept = chain(ctx, [("mul", [ctx.inp(2 + k), const("momentum", momentum, [1])], {})],
                     out=fresh(f"{ctx.out(k)}_kept"))
        chain(ctx, [("reshape", [batch], {"shape": [x[1]]}),
                    ("mul", [const("new", 1.0 - momentum, [1])], {}), ("add", [kept], {})],
              out=ctx.out(k))


MATH_CONVERTERS: dict[str, Callable[[Context], None]] = {
    "Sqrt": _unary("sqrt"),
    "Exp": _unary("exp"),
    "Log": _unary("log"),
    "Neg": _unary("neg"),
    "Abs": _unary("abs"),
    "Erf": _unary("erf"),
    "Gelu": gelu,
    "Pow": pow_,
    "ReduceMax": _reduce("reduce_max", 18),
    "ReduceMin": _reduce("reduce_min", 18),
    "ReduceSum": _reduce("reduce_sum", 13),
    "ReduceProd": _reduce("reduce_prod", 18),
    "Gather": gather,
    "LayerNormalization": layer_norm,
}
