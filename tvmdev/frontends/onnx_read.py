"""Reading an ONNX model: the file parsed with the ``onnx`` package (the ``onnx`` extra),
its external data read from its folder, and checked with ``onnx.checker`` in full and
strict shape inference (their message made one line, naming the value it means),
opsets, element types, control flow and quantized operators refused; and how the front
end reads a value's declared type and shape."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import numpy as np

from ..errors import TvmdevError
from . import onnx_external as external
from .onnx_context import node_label
from .onnx_versions import OLDEST_OPSET, newest_opset

EXTRA_HINT = "pip install 'tvmdev[onnx]'"
CONTROL_FLOW = ("If", "Loop", "Scan")
# Dynamically quantized models (quantize_dynamic): refused; static int8 ones (QDQ, QLinear)
# are lowered by onnx_qdq_lower.
QUANTIZED = ("DynamicQuantizeLinear", "ConvInteger", "MatMulInteger")


def package(path: Path) -> ModuleType:
    """The ``onnx`` package, or a one-line refusal naming the extra that brings it."""
    try:
        import onnx
    except ImportError:
        raise TvmdevError("reading a .onnx model needs the onnx extra: " + EXTRA_HINT,
                          str(path)) from None
    return onnx


def read(path: Path, raw: bytes) -> Any:
    """The model in ``raw``, parsed and checked (an ``onnx.ModelProto``)."""
    onnx = package(path)
    from google.protobuf.message import DecodeError
    try:
        model = onnx.load_model_from_string(raw)
    except (DecodeError, ValueError, RuntimeError, UnicodeDecodeError):
        raise TvmdevError(f"corrupt or truncated ONNX model ({len(raw)} bytes)",
                          str(path)) from None
    if not model.HasField("graph") or not model.graph.output:
        raise TvmdevError("not an ONNX model (no graph with outputs)", str(path))
    _check_opset(onnx, model, path)
    external.load(onnx, model, path)  # before the checker, which would look for the files
    _check_elem_types(onnx, model, path)  # a clearer line than the checker's
    check_strictly(onnx, model, path)
    return model


def check_strictly(onnx: ModuleType, model: Any, path: Path) -> None:
    """Refuse what ONNX's own checks refuse (one line): the checker in full, where ONNX
    Runtime's session refuses the same models. ``full_check`` checks the structure and
    then runs shape inference in strict mode with types checked (every node's types and
    shapes against its operator's schema), so no second inference is needed."""
    errors = (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, ValueError,
              RuntimeError)
    try:
        onnx.checker.check_model(model, full_check=True)
    except errors as exc:
        _invalid(model, path, exc)


def _invalid(model: Any, path: Path, exc: BaseException) -> NoReturn:
    """Refuse the model in one line with what ``onnx.checker`` says is wrong: its message
    (whose first sentence may span lines, quoting a node) up to its context, and the
    graph input or output it means when it names no value."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    message, _, context = text.partition("==> Context:")
    message = message.strip()
    if context.strip():
        message += f" ({context.strip()})"
    missing = re.fullmatch(r"Field '(\w+)' of '(\w+)' is required but missing\.?", message)
    if missing:
        for what, vi in _values(model)[:len(model.graph.input) + len(model.graph.output)]:
            lacks = (not vi.HasField("type") if missing[1] == "type" else
                     vi.type.HasField("tensor_type")
                     and not vi.type.tensor_type.HasField(missing[1]))
            if lacks:
                raise TvmdevError(f"invalid ONNX model: {what} '{vi.name}' has no "
                                  f"{missing[1]} ({message})", str(path),
                                  hint="declare it with onnx.helper.make_tensor_value_info"
                                       " (a dynamic dim by a name: ['N', 4])") from None
    raise TvmdevError(f"invalid ONNX model: {message}", str(path)) from None


def _values(model: Any) -> list[tuple[str, Any]]:
    """The graph's declared values with what they are: inputs, outputs, value_info."""
    g = model.graph
    return ([("graph input", vi) for vi in g.input] + [("graph output", vi) for vi in g.output]
            + [("value_info", vi) for vi in g.value_info])


def _check_elem_types(onnx: ModuleType, model: Any, path: Path) -> None:
    """Refuse an element type ONNX does not define (the checker in full refuses it too,
    in terms of its own)."""
    known = set(onnx.TensorProto.DataType.values())
    for what, vi in _values(model):
        elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if elem not in known:
            raise TvmdevError(f"{what} '{vi.name}' has elem_type {elem}, which ONNX does not "
                              "define (a corrupt model)", str(path))


def _check_opset(onnx: ModuleType, model: Any, path: Path) -> None:
    """Opsets from 7 to the newest the installed onnx defines (each node's version in
    effect is checked as it is converted: :mod:`.onnx_versions`)."""
    versions = {imp.domain: imp.version for imp in model.opset_import}
    version = versions.get("", versions.get("ai.onnx"))
    lo, hi = OLDEST_OPSET, newest_opset(onnx)
    if version is None or not lo <= version <= hi:
        what = "no opset" if version is None else f"opset {version}"
        raise TvmdevError(f"the model uses {what} of the default domain (ai.onnx); tvmdev "
                          f"imports opsets {lo} to {hi} (the newest onnx {onnx.__version__} "
                          "defines)", str(path),
                          hint="convert it: onnx.version_converter.convert_version(model, 17)")


def check_structure(model: Any, path: Path) -> None:
    """Refuse control flow and dynamically quantized models, naming the nodes."""
    onnx = package(path)
    graph_types = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    found: dict[str, dict[str, list[str]]] = {"flow": {}, "quant": {}}
    for i, node in enumerate(model.graph.node):
        key = ("flow" if node.op_type in CONTROL_FLOW
               or any(a.type in graph_types for a in node.attribute)
               else "quant" if node.op_type in QUANTIZED
               else None)
        if key:
            found[key].setdefault(node.op_type, []).append(node_label(node, i))
    for key, text, hint in (
            ("flow", "the model has control flow ({}); tvmdev imports one graph without it",
             "export the model without control flow (static loops unrolled)"),
            ("quant", "the model is dynamically quantized ({}); tvmdev imports float32 and "
             "statically quantized int8 models", "quantize it with "
             "onnxruntime.quantization.quantize_static (QDQ, QInt8), or import the float32 "
             "model")):
        if found[key]:
            kinds = ", ".join(f"{k} x{len(v)} (first: {v[0]})" for k, v in found[key].items())
            raise TvmdevError(text.format(kinds), str(path), hint=hint)


def value_dtype(onnx: ModuleType, type_proto: Any) -> str:
    """A value's numpy dtype name, or what it is when not a tensor."""
    kind = type_proto.WhichOneof("value")
    if kind != "tensor_type":
        return {"sequence_type": "a sequence", "optional_type": "an optional",
                "map_type": "a map", "sparse_tensor_type": "a sparse tensor"}.get(
                    kind or "", "untyped")
    elem = type_proto.tensor_type.elem_type
    try:
        return str(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)))
    except (KeyError, TypeError, ValueError):
        if not elem:
            return "untyped"
        try:
            return str(onnx.TensorProto.DataType.Name(elem).lower())
        except ValueError:  # not an ONNX type (read() refuses it)
            return f"elem_type {elem}"


def value_dims(type_proto: Any) -> list[int | str] | None:
    """A tensor's dims: sizes, or the names (or "?") of dynamic ones; None: no shape."""
    t = type_proto.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in t.shape.dim]


def shown_dims(dims: list[int | str]) -> str:
    """Dims as messages show them: [N, 3, 224, 224] (a dynamic dim by its name, or ?)."""
    return "[" + ", ".join(str(d) for d in dims) + "]"
