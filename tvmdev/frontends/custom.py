"""Source operators that are the user's custom operators (:mod:`tvmdev.model.custom`): a
TFLite CUSTOM operator by its custom code, a TFLite builtin tvmdev does not map, or an
ONNX node by domain and op type. Each converter reads the operator's params as the
``--kernels`` entry declares them, checked against their C types:

- a TFLite custom operator's custom options, a flexbuffer map (what TFLM's kernels read
  with ``flexbuffers::GetRoot(buffer, length).AsMap()``), decoded with the flatbuffers
  package's ``flexbuffers``; keys the entry does not declare are not read, as a TFLM
  kernel reads only the keys it knows;
- a TFLite builtin's options table, each param the field of the same name;
- an ONNX node's attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..load.custom_ops import param_value
from ..model.custom import CUSTOM, CustomOp
from .graph import Builder, Unsupported
from .onnx_context import Context as OnnxContext
from .onnx_context import chain as onnx_chain
from .tflite_context import Context as TfContext
from .tflite_context import chain as tf_chain

FLEXBUFFERS = 0  # tflite.CustomOptionsFormat.FLEXBUFFERS


def tflite_converter(kind: str) -> Callable[[TfContext], None] | None:
    """The converter of TFLite operator ``kind`` (``CUSTOM:code`` or a builtin's name)
    when a custom op of the command stands for it."""
    for c in CUSTOM.values():
        if (c.tflite_custom is not None and kind == "CUSTOM:" + c.tflite_custom) or (
                c.tflite_builtin is not None and kind == c.tflite_builtin):
            return partial(_tflite, c)
    return None


def onnx_converter(domain: str, op_type: str) -> Callable[[OnnxContext], None] | None:
    """The converter of an ONNX node when a custom op of the command stands for it."""
    dom = "" if domain == "ai.onnx" else domain
    for c in CUSTOM.values():
        if c.onnx == (dom, op_type):
            return partial(_onnx, c)
    return None


def _operands(c: CustomOp, count: int, label: str, b: Builder) -> None:
    if count != len(c.inputs):
        raise TvmdevError(f"{label} has {count} inputs; custom op {c.name} ({c.where}) "
                          f"takes {len(c.inputs)} ({', '.join(c.inputs)})", str(b.source),
                          hint="the entry's inputs must match the model's operator")


def _attrs(c: CustomOp, given: dict[str, Any], label: str) -> dict[str, Any]:
    """The declared params' values from what the operator gives (each checked against its
    type, at its declaration), else their defaults."""
    out: dict[str, Any] = {}
    for p in c.params:
        if p.name in given:
            out[p.name] = param_value(p, given[p.name], f"{label} gives")
        elif p.default is not None:
            out[p.name] = p.default
        else:
            raise TvmdevError(f"param {p.name}: {label} does not give it and it has no "
                              "default", p.where,
                              hint="give it a default: {type: " + p.type + ", default: ...}")
    return out


def _tflite(c: CustomOp, ctx: TfContext) -> None:
    op = ctx.op
    label = f"{ctx.b.source.name} operator {op.index} ({op.kind})"
    _operands(c, len(op.inputs), label, ctx.b)
    given = _custom_options(op.raw, label, ctx.b) if c.tflite_custom is not None else \
        _builtin_options(c, op.raw, label)
    attrs = _attrs(c, given, label)
    tf_chain(ctx, [(c.name, [ctx.inp(i) for i in range(len(op.inputs))], attrs)])


def _custom_options(raw: Any, label: str, b: Builder) -> dict[str, Any]:
    """A TFLite custom operator's options, decoded from their flexbuffer map."""
    from flatbuffers import flexbuffers

    if raw.CustomOptionsLength() == 0:
        return {}
    if raw.CustomOptionsFormat() != FLEXBUFFERS:
        raise TvmdevError(f"{label}: custom options in format {raw.CustomOptionsFormat()}, "
                          "not flexbuffers", str(b.source))
    data = raw.CustomOptionsAsNumpy().tobytes()
    try:
        value = flexbuffers.Loads(bytearray(data))
    except Exception:  # a corrupt buffer: the decoder raises anything
        raise TvmdevError(f"{label}: its custom options are not a readable flexbuffer "
                          f"({len(data)} bytes)", str(b.source)) from None
    if not isinstance(value, dict):
        raise TvmdevError(f"{label}: its custom options are a flexbuffer "
                          f"{type(value).__name__}, not a map", str(b.source),
                          hint="tvmdev reads custom options as TFLM kernels do: a map of "
                               "named values")
    return {str(k): _plain(v) for k, v in value.items()}


def _plain(v: Any) -> Any:
    """A decoded flexbuffer value as a Python scalar (numpy scalars as int, float)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _builtin_options(c: CustomOp, raw: Any, label: str) -> dict[str, Any]:
    """A TFLite builtin's options table, each declared param read from its field."""
    import tflite

    table = raw.BuiltinOptions()
    names = {v: k for k, v in vars(tflite.BuiltinOptions).items() if isinstance(v, int)}
    kind = names.get(raw.BuiltinOptionsType(), "NONE")
    if table is None or kind == "NONE":
        return {}
    opts = getattr(tflite, kind)()
    opts.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for p in c.params:
        field = "".join(w.capitalize() for w in p.name.split("_"))
        getter = getattr(opts, field, None)
        if getter is None:
            raise TvmdevError(f"param {p.name}: {label}'s {kind} has no field {field}",
                              p.where, hint=f"name the params after {kind}'s fields, in "
                                            "snake_case")
        value = getter()
        out[p.name] = _plain(value)
    return out


def _onnx(c: CustomOp, ctx: OnnxContext) -> None:
    node = ctx.node
    label = f"{ctx.b.source.name} node {ctx.index} ({node.domain or 'ai.onnx'}:{node.op_type})"
    _operands(c, len(node.input), label, ctx.b)
    attrs = _attrs(c, dict(ctx.attrs), label)
    if not all(ctx.has(i) for i in range(len(node.input))):
        raise Unsupported("an absent input")
    onnx_chain(ctx, [(c.name, [ctx.inp(i) for i in range(len(node.input))], attrs)])
