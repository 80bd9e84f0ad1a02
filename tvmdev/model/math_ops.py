"""float32 operators for elementwise math (sqrt, exp, log, neg, abs, erf, gelu, pow),
reductions (reduce_max, reduce_min, reduce_sum, reduce_prod), gather, clip by bounds
computed at run time (clip_bounds) and layer normalization: their definitions, shape
rules and kernel params. :data:`tvmdev.model.ops.OPS` holds them with the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .opdef import Attr, OpDef
from .regions import mean_infer, mean_params
from .resize_interp import RESIZE_OPDEF
from .shapes import (
    MAX_DIMS,
    Shape,
    ShapeError,
    binary_infer,
    binary_params,
    count_params,
    norm_axis,
    numel,
    same_infer,
)

GELU_APPROXIMATIONS = ("none", "tanh")
REDUCTIONS = ("reduce_max", "reduce_min", "reduce_sum", "reduce_prod")
# Attributes that may be left unset without a default (no axes: every axis).
MATH_OPTIONAL_NO_DEFAULT = {(op, "axes") for op in REDUCTIONS}


def _unary(name: str, doc: str) -> OpDef:
    return OpDef(name, ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", same_infer,
                 count_params, doc=doc)


def gelu_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                ) -> dict[str, Any]:
    """The kernel params of gelu."""
    return {"count": numel(out),
            "approximate": GELU_APPROXIMATIONS.index(attrs["approximate"])}


# --- clip by bounds computed at run time ----------------------------------------------

def clip_bounds_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of clip_bounds: the input's; each bound given is one value."""
    x = shapes[0]
    assert x is not None
    for what, s in zip(("min", "max"), shapes[1:], strict=False):
        if s is not None and numel(s) != 1:
            raise ShapeError(f"clip_bounds: {what} must be one value (a scalar), got shape "
                             f"{list(s)}")
    return x


# --- reductions -----------------------------------------------------------------------

def _reduce(name: str, doc: str) -> OpDef:
    def infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
        try:
            return mean_infer(shapes, attrs)
        except ShapeError as exc:  # mean's rule, named after this op
            raise ShapeError(str(exc).replace("mean:", f"{name}:", 1)) from None

    return OpDef(name, ("data",), frozenset(), ("reduced",),
                 {"axes": Attr("ints", None), "keepdims": Attr("bool", 1)},
                 "tvmk_mean_params", infer, mean_params, doc=doc)


# --- gather ---------------------------------------------------------------------------

def _gather_dims(shapes: list[Shape | None], attrs: dict[str, Any]
                 ) -> tuple[Shape, int, Shape]:
    data, indices = shapes[0], shapes[1]
    assert data is not None and indices is not None
    if not data:
        raise ShapeError("gather: data must have at least one dim")
    return data, norm_axis(attrs["axis"], len(data)), indices


def gather_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of gather: data's dims before axis, the indices' dims, data's
    dims after axis."""
    data, axis, indices = _gather_dims(shapes, attrs)
    out = (*data[:axis], *indices, *data[axis + 1:])
    if len(out) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    return out


def gather_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                  ) -> dict[str, Any]:
    """The kernel params of gather."""
    data, axis, indices = _gather_dims(shapes, attrs)
    return {"outer": numel(data[:axis]), "axis_size": data[axis],
            "inner": numel(data[axis + 1:]), "count": numel(indices)}


# --- layer normalization --------------------------------------------------------------

def _stride(s: Shape | None, norm: Shape, what: str) -> int:
    """A scale's or bias's stride over the normalized elements: 1 (one per element), 0
    (one value); anything else does not fit."""
    if s is None or numel(s) == 1:
        return 0
    trimmed = tuple(s[next((i for i, d in enumerate(s) if d != 1), len(s)):])
    if trimmed == norm[len(norm) - len(trimmed):] and numel(trimmed) == numel(norm):
        return 1
    raise ShapeError(f"layer_norm: {what} {list(s)} must be one value or the normalized "
                     f"shape {list(norm)}")


def _layer_norm_dims(shapes: list[Shape | None], attrs: dict[str, Any]
                     ) -> tuple[int, int, int, int]:
    x = shapes[0]
    assert x is not None
    if not x:
        raise ShapeError("layer_norm: X must have at least one dim")
    axis = norm_axis(attrs["axis"], len(x))
    norm = x[axis:]
    scale = _stride(shapes[1], norm, "Scale")
    bias = _stride(shapes[2] if len(shapes) > 2 else None, norm, "B")
    return numel(x[:axis]), numel(norm), scale, bias


def layer_norm_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of layer_norm: X's."""
    _layer_norm_dims(shapes, attrs)
    assert shapes[0] is not None
    return shapes[0]


def layer_norm_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                      ) -> dict[str, Any]:
    """The kernel params of layer_norm."""
    outer, inner, scale, bias = _layer_norm_dims(shapes, attrs)
    return {"outer": outer, "inner": inner, "epsilon": float(attrs["epsilon"]),
            "scale_stride": scale, "bias_stride": bias}


def inv_std_dev_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of inv_std_dev: X's dims before axis, then 1s."""
    x = shapes[0]
    assert x is not None
    if not x:
        raise ShapeError("inv_std_dev: X must have at least one dim")
    axis = norm_axis(attrs["axis"], len(x))
    return (*x[:axis], *(1,) * (len(x) - axis))


def inv_std_dev_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                       ) -> dict[str, Any]:
    """The kernel params of inv_std_dev."""
    x = shapes[0]
    assert x is not None
    axis = norm_axis(attrs["axis"], len(x))
    return {"outer": numel(x[:axis]), "inner": numel(x[axis:]),
            "epsilon": float(attrs["epsilon"])}


def _binary(name: str, doc: str, params: Callable[..., dict[str, Any]]) -> OpDef:
    return OpDef(name, ("A", "B"), frozenset(), ("C",), {}, "tvmk_binary_params",
                 binary_infer, params, doc=doc)


MATH_OPS: list[OpDef] = [
    _unary("sqrt", "Y = sqrt(X)"),
    _unary("exp", "Y = exp(X)"),
    _unary("log", "Y = log(X)"),
    _unary("neg", "Y = -X"),
    _unary("abs", "Y = |X|"),
    _unary("erf", "Y = erf(X)"),
    OpDef("gelu", ("X",), frozenset(), ("Y",),
          {"approximate": Attr("str", "none", choices=GELU_APPROXIMATIONS)},
          "tvmk_gelu_params", same_infer, gelu_params,
          doc="Y = X * (1 + erf(X / sqrt(2))) / 2; approximate tanh: ONNX's tanh form"),
    _binary("pow", "C = A ** B, broadcasting", binary_params),
    OpDef("clip_bounds", ("input", "min", "max"), frozenset({"min", "max"}), ("output",), {},
          "tvmk_unary_params", clip_bounds_infer, count_params,
          doc="min(max(input, min), max); min and max one value each, computed at run time"),
    _reduce("reduce_max", "max over axes (default: all)"),
    _reduce("reduce_min", "min over axes (default: all)"),
    _reduce("reduce_sum", "sum over axes (default: all)"),
    _reduce("reduce_prod", "product over axes (default: all)"),
    OpDef("gather", ("data", "indices"), frozenset(), ("output",), {"axis": Attr("int", 0)},
          "tvmk_gather_params", gather_infer, gather_params, index_inputs=frozenset(
              {"indices"}), doc="data's slices along axis at int32 indices (negative from "
                                "the end)"),
    OpDef("layer_norm", ("X", "Scale", "B"), frozenset({"B"}), ("Y",),
          {"axis": Attr("int", -1), "epsilon": Attr("float", 1e-5)},
          "tvmk_layer_norm_params", layer_norm_infer, layer_norm_params,
          doc="(X - mean) / sqrt(var + epsilon) * Scale + B over the dims from axis"),
    OpDef("inv_std_dev", ("X",), frozenset(), ("Y",),
          {"axis": Attr("int", -1), "epsilon": Attr("float", 1e-5)},
          "tvmk_inv_std_dev_params", inv_std_dev_infer, inv_std_dev_params,
          doc="1 / sqrt(var + epsilon) over the dims from axis (LayerNormalization's "
              "InvStdDev)"),
    RESIZE_OPDEF,
]
