"""What the ONNX front end computes at import instead of at run time.

* Shape arithmetic on static shapes (``Shape``, ``Gather``, ``Unsqueeze``, ``Squeeze``,
  ``Concat``, ``ConstantOfShape``, ``Constant``, ``Cast``, ``Slice``, ``Reshape`` and
  elementwise arithmetic of constants): every node whose operands are all known at import
  is evaluated with numpy, its outputs become known values (constants where a converted
  operator reads them as float32 operands).
* ``BatchNormalization`` after a conv or gemm that writes its input for it alone: the
  per-channel scale and shift are folded into that operator's weights and bias.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import TvmdevError, shown, shown_count
from ..load.fields import MAX_CONSTANT_ELEMENTS
from .graph import Builder, Unsupported
from .onnx_context import Context, node_label, op_kind


def _check_size(ctx: Context, shape: Sequence[int]) -> None:
    """Refuse a value computed at import larger than a constant may be, before numpy
    allocates it (a negative dim numpy refuses itself)."""
    dims = [int(d) for d in shape]
    count = math.prod(dims)
    if min(dims, default=0) >= 0 and count > MAX_CONSTANT_ELEMENTS:
        raise TvmdevError(f"{node_label(ctx.node, ctx.index)} {ctx.node.op_type}: its value, "
                          f"computed at import, would have {shown_count(count)} elements "
                          f"({shown(dims)});"
                          f" at most {MAX_CONSTANT_ELEMENTS} are supported (a constant is "
                          "compiled into the program)", str(ctx.g.path))


def _constant(ctx: Context) -> np.ndarray:
    a = ctx.attrs
    if "value" in a:
        return np.asarray(a["value"])
    if "value_float" in a:
        return np.asarray(a["value_float"], np.float32)
    if "value_floats" in a:
        return np.asarray(a["value_floats"], np.float32)
    if "value_int" in a:
        return np.asarray(a["value_int"], np.int64)
    if "value_ints" in a:
        return np.asarray(a["value_ints"], np.int64)
    raise Unsupported("a constant that is not a number tensor")


def _shape(ctx: Context) -> np.ndarray:
    shape = ctx.shape(0)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    return np.asarray(shape[start:None if end is None else int(end)], np.int64)


def squeezed(ctx: Context, data: np.ndarray) -> np.ndarray:
    """``data`` squeezed or unsqueezed as the node says (axes an attribute before opset
    13, an operand after)."""
    if ctx.opset >= 13:
        axes = ctx.ints(1, "axes") if ctx.has(1) else None
    else:
        axes = ctx.attr("axes")
    if ctx.node.op_type == "Unsqueeze":
        if not axes:
            raise Unsupported("no axes")
        rank = data.ndim + len(axes)
        for a in sorted(int(a) % rank for a in axes):
            data = np.expand_dims(data, a)
        return data
    if axes is None:
        return np.squeeze(data)
    return np.squeeze(data, axis=tuple(int(a) % max(data.ndim, 1) for a in axes))


def _invalid(ctx: Context, message: str) -> TvmdevError:
    """A node whose operands ONNX does not define a value for, named."""
    kind = op_kind(ctx.node)
    return TvmdevError(f"{node_label(ctx.node, ctx.index)} {kind}: {message}", str(ctx.g.path),
                       hint=ctx.b.hint_for(kind))


def _slice(ctx: Context) -> np.ndarray:
    data = ctx.static(0, "data")
    if data.ndim == 0:
        raise _invalid(ctx, "slices a 0-d value (a scalar); Slice's data has at least one "
                            "dim")
    if ctx.opset < 10:
        starts, ends = list(ctx.attr("starts")), list(ctx.attr("ends"))
        axes, steps = ctx.attr("axes"), None
    else:
        starts, ends = ctx.ints(1, "starts"), ctx.ints(2, "ends")
        axes = ctx.ints(3, "axes") if ctx.has(3) else None
        steps = ctx.ints(4, "steps") if ctx.has(4) else None
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else steps
    index: list[slice] = [slice(None)] * data.ndim
    for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
        if not -data.ndim <= int(a) < data.ndim or int(st) == 0:
            raise _invalid(ctx, f"axis {int(a)} of a {data.ndim}-D value" if int(st) else
                           "a step of 0")
        index[int(a) % data.ndim] = slice(int(s), int(e), int(st))
    return np.asarray(data[tuple(index)])


def _reshape(ctx: Context) -> np.ndarray:
    data = ctx.static(0, "data")
    shape = ctx.ints(1, "shape")
    if not ctx.attr("allowzero", 0):
        shape = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return data.reshape(shape)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":  # C's division: towards zero
        q = np.abs(a) // np.abs(b)
        return np.asarray(np.where((a < 0) != (b < 0), -q, q).astype(a.dtype))
    return np.asarray(a / b).astype(a.dtype)


def _div(ctx: Context) -> np.ndarray:
    a, b = ctx.static(0, "A"), ctx.static(1, "B")
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and not np.all(b):
        raise _invalid(ctx, f"divides integers by 0 (B is {shown(b.tolist())}); ONNX does "
                            "not define an integer division by 0")
    if a.dtype.kind == "i" and b.dtype.kind == "i":
        low = np.iinfo(np.result_type(a, b)).min
        if np.any((a == low) & (b == -1)):
            raise _invalid(ctx, f"divides {np.result_type(a, b)}'s minimum {low} by -1; the "
                                f"quotient {-low} does not fit (ONNX Runtime traps on it)")
    return _binary(_divide)(ctx)


def _cast(ctx: Context) -> np.ndarray:
    from onnx import helper
    return ctx.static(0, "input").astype(helper.tensor_dtype_to_np_dtype(int(ctx.attr("to"))))


def _binary(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[[Context], np.ndarray]:
    def fold(ctx: Context) -> np.ndarray:
        a, b = ctx.static(0, "A"), ctx.static(1, "B")
        _check_size(ctx, np.broadcast_shapes(a.shape, b.shape))
        return np.asarray(fn(a, b)).astype(np.result_type(a, b))
    return fold


def _gather(ctx: Context) -> np.ndarray:
    data, indices = ctx.static(0, "data"), ctx.static(1, "indices").astype(np.int64)
    axis = int(ctx.attr("axis", 0))
    if -data.ndim <= axis < data.ndim:
        axis %= data.ndim
        _check_size(ctx, data.shape[:axis] + indices.shape + data.shape[axis + 1:])
    return np.take(data, indices, axis=axis)


def _concat(ctx: Context) -> np.ndarray:
    parts = [ctx.static(i, "input") for i in range(len(ctx.node.input))]
    axis, rank = int(ctx.attr("axis", 0)), parts[0].ndim if parts else 0
    if all(p.ndim == rank for p in parts) and -rank <= axis < rank:
        shape = list(parts[0].shape)
        shape[axis] = sum(p.shape[axis] for p in parts)
        _check_size(ctx, shape)
    return np.concatenate(parts, axis=axis)


def _constant_of_shape(ctx: Context) -> np.ndarray:
    value = np.asarray(ctx.attr("value", np.zeros(1, np.float32)))
    shape = ctx.ints(0, "shape")
    _check_size(ctx, shape)
    return np.full(shape, value.ravel()[0], dtype=value.dtype)


FOLDERS: dict[str, Callable[[Context], np.ndarray]] = {
    "Constant": _constant,
    "Shape": _shape,
    "Gather": _gather,
    "Unsqueeze": lambda ctx: squeezed(ctx, ctx.static(0, "data")),
    "Squeeze": lambda ctx: squeezed(ctx, ctx.static(0, "data")),
    "Concat": _concat,
    "ConstantOfShape": _constant_of_shape,
    "Cast": _cast,
    "Slice": _slice,
    "Reshape": _reshape,
    "Transpose": lambda ctx: np.transpose(ctx.static(0, "data"), ctx.attr("perm")),
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _div,
}


def foldable(ctx: Context) -> bool:
    """Whether the node is evaluated at import: every operand is known then (for
    ``Shape``, the operand's static shape)."""
    kind = ctx.node.op_type
    if kind not in FOLDERS or len(ctx.node.output) != 1:
        return False
    if kind == "Shape":
        return True
    return all(ctx.const(i) is not None for i in range(len(ctx.node.input)) if ctx.has(i))


def fold(ctx: Context) -> None:
    """Evaluate the node with numpy; its output becomes a known value."""
    try:
        with np.errstate(all="ignore"):
            value = FOLDERS[ctx.node.op_type](ctx)
    except (ValueError, IndexError, TypeError, KeyError, OverflowError) as exc:
        raise Unsupported(f"not evaluated at import: {exc}") from None
    except MemoryError:
        raise TvmdevError(f"{node_label(ctx.node, ctx.index)} {ctx.node.op_type}: its value, "
                          "computed at import, does not fit in memory",
                          str(ctx.g.path)) from None
    ctx.g.consts[ctx.node.output[0]] = np.array(value, order="C")


# --- batch normalization --------------------------------------------------------------

def _array(b: Builder, name: str | None) -> np.ndarray | None:
    """A constant's values (None for a tensor computed at run time, or no tensor)."""
    if name not in b.constants:
        return None
    return b.constants[name].astype(np.float64)


def _drop_unread(b: Builder, names: list[str | None]) -> None:
    """Remove constants no operator reads any more."""
    read = {t for op in b.operators for t in op.inputs}
    for name in names:
        if name in b.constants and name not in read:
            del b.constants[name]


def fold_batch_norm(ctx: Context, s: np.ndarray, t: np.ndarray) -> bool:
    """Fold ``y = x * s + t`` (per channel) into the conv2d or gemm writing ``x`` when it
    writes it for this node alone, with constant weights and bias. Whether it did."""
    g, b = ctx.g, ctx.b
    src = ctx.name(0)
    x = g.cname[src]
    idx = g.producer.get(x)
    if idx is None or g.uses.get(src, 0) != 1 or src in g.outputs:
        return False
    op = b.operators[idx]
    ins = list(op.inputs) + [None] * (3 - len(op.inputs))
    w, bias = _array(b, ins[1]), _array(b, ins[2]) if ins[2] else np.zeros(1)
    if op.op not in ("conv2d", "gemm") or w is None or bias is None:
        return False
    attrs = dict(op.attrs)
    out = b.shapes[x]
    if op.op == "conv2d":
        if s.shape != (w.shape[0],):
            return False
        w = w * s.reshape((-1,) + (1,) * (w.ndim - 1))
        bias = bias * s + t
    else:
        if s.shape != (out[1],):
            return False
        w = w * (s[:, None] if attrs.get("transB") else s[None, :])
        bias = float(attrs.get("beta", 1.0)) * bias * s + t
        attrs["beta"] = 1.0
    new_w = b.constant(b.fresh(f"{ins[1]}_bn"), w)
    new_b = b.constant(b.fresh(f"{ctx.out()}_bias"), bias)
    b.rewrite(idx, [ins[0], new_w, new_b], ctx.out(), attrs)
    g.producer[ctx.out()] = idx
    _drop_unread(b, [ins[1], ins[2]])
    return True
