"""The ONNX front end: a ``.onnx`` model read with the ``onnx`` package (the ``onnx``
extra), checked with ``onnx.checker``, typed with ``onnx.shape_inference``, and its one
graph converted node by node (the table in :mod:`.onnx_ops`) into a model description.

Initializers are known values: float32 ones become constants where an operator reads
them; integer ones only feed shape arithmetic, which is evaluated at import
(:mod:`.onnx_fold`), as are ``Identity`` and inference ``Dropout``, which are removed.
Inputs and outputs keep the model's order and are named after its tensor names made
into C identifiers. Layouts stay NCHW.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.shapes import Shape
from .graph import Builder, Imported, Unsupported, c_names
from .onnx_context import Context, Graph
from .onnx_fold import FOLDERS, fold, foldable
from .onnx_ops import CONVERTERS

EXTRA_HINT = "pip install 'tvmdev[onnx]'"
DOMAINS = ("", "ai.onnx")
OPSETS = (7, 25)  # of the default domain
CONTROL_FLOW = ("If", "Loop", "Scan")
# Quantized models: parsed, refused until int8 import comes.
QUANTIZED = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
             "QLinearMatMul", "ConvInteger", "MatMulInteger")
REMOVED = ("Identity", "Dropout")


def _package(path: Path) -> ModuleType:
    try:
        import onnx
    except ImportError:
        raise TvmdevError("reading a .onnx model needs the onnx extra: " + EXTRA_HINT,
                          str(path)) from None
    return onnx


def read(path: Path, raw: bytes) -> Any:
    """The model in ``raw``, parsed and checked (an ``onnx.ModelProto``)."""
    onnx = _package(path)
    from google.protobuf.message import DecodeError
    try:
        model = onnx.load_model_from_string(raw)
    except (DecodeError, ValueError, RuntimeError, UnicodeDecodeError):
        raise TvmdevError(f"corrupt or truncated ONNX model ({len(raw)} bytes)",
                          str(path)) from None
    if not model.HasField("graph") or not model.graph.output:
        raise TvmdevError("not an ONNX model (no graph with outputs)", str(path))
    _check_opset(model, path)
    for t in model.graph.initializer:  # before the checker, which looks for the file
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise TvmdevError(f"initializer '{t.name}' is stored in an external file; tvmdev "
                              "reads self-contained models", str(path),
                              hint="save the model with its weights inside (onnx.save with "
                                   "save_as_external_data=False)")
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TvmdevError(f"invalid ONNX model: {first}", str(path)) from None
    return model


def _check_opset(model: Any, path: Path) -> None:
    versions = {imp.domain: imp.version for imp in model.opset_import}
    version = versions.get("", versions.get("ai.onnx"))
    lo, hi = OPSETS
    if version is None or not lo <= version <= hi:
        what = "no opset" if version is None else f"opset {version}"
        raise TvmdevError(f"the model uses {what} of the default domain (ai.onnx); tvmdev "
                          f"imports opsets {lo} to {hi}", str(path),
                          hint="convert it: onnx.version_converter.convert_version(model, 17)")


def _structure(model: Any, path: Path) -> None:
    """Refuse control flow and quantized models, naming the nodes."""
    onnx = _package(path)
    graph_types = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    found: dict[str, dict[str, list[str]]] = {"flow": {}, "quant": {}}
    for i, node in enumerate(model.graph.node):
        key = ("flow" if node.op_type in CONTROL_FLOW
               or any(a.type in graph_types for a in node.attribute)
               else "quant" if node.op_type in QUANTIZED or node.op_type.startswith("QLinear")
               else None)
        if key:
            found[key].setdefault(node.op_type, []).append(_node_name(node, i))
    for key, text, hint in (
            ("flow", "the model has control flow ({}); tvmdev imports one graph without it",
             "export the model without control flow (static loops unrolled)"),
            ("quant", "the model is quantized ({}); tvmdev imports float32 models for now, "
             "int8 comes next", "import the float32 model")):
        if found[key]:
            kinds = ", ".join(f"{k} x{len(v)} (first: {v[0]})" for k, v in found[key].items())
            raise TvmdevError(text.format(kinds), str(path), hint=hint)


def _node_name(node: Any, i: int) -> str:
    return f"node {i} '{node.name or (node.output[0] if node.output else '')}'"


def _dtype(onnx: ModuleType, type_proto: Any) -> str:
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
        return onnx.TensorProto.DataType.Name(elem).lower() if elem else "untyped"


def _dims(type_proto: Any) -> list[int | str] | None:
    """A tensor's dims: sizes, or the names (or "?") of dynamic ones; None: no shape."""
    t = type_proto.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in t.shape.dim]


def _input_shape(vi: Any, cname: str, given: dict[str, Shape], path: Path) -> Shape:
    for key in (vi.name, cname):
        if key in given:
            return given.pop(key)
    dims = _dims(vi.type)
    if dims is None or any(not isinstance(d, int) or d <= 0 for d in dims):
        shown = "no shape" if dims is None else f"a dynamic shape {dims}".replace("'", "")
        example = ",".join(str(d) if isinstance(d, int) and d > 0 else "1"
                           for d in dims or ["D", "D"])
        if dims is not None and any(d == 0 for d in dims):
            raise TvmdevError(f"input '{vi.name}' is empty ({dims}); tvmdev needs tensors "
                              "with at least one element", str(path))
        raise TvmdevError(f"input '{vi.name}' has {shown}", str(path),
                          hint=f"fix it: --input-shape {cname}={example}")
    return tuple(int(d) for d in dims)


def _inputs(model: Any, path: Path, given: dict[str, Shape], cname: dict[str, str],
            b: Builder) -> None:
    onnx = _package(path)
    inits = {t.name for t in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in inits]
    unknown = set(given) - {n for vi in inputs for n in (vi.name, cname[vi.name])}
    if unknown:
        raise TvmdevError(f"--input-shape {', '.join(sorted(unknown))}: no such input",
                          str(path), hint="inputs: " + ", ".join(cname[vi.name]
                                                                 for vi in inputs))
    for vi in inputs:
        dtype = _dtype(onnx, vi.type)
        if dtype != "float32":
            raise TvmdevError(f"input '{vi.name}' is {dtype}; tvmdev imports float32 "
                              "models for now", str(path))
        b.add_input(cname[vi.name], _input_shape(vi, cname[vi.name], given, path))


def _typed(model: Any, path: Path, b: Builder, cname: dict[str, str]
           ) -> tuple[dict[str, str], dict[str, Shape]]:
    """Dtypes and static shapes of the model's values by ONNX's shape inference, with
    the inputs' shapes as imported."""
    onnx = _package(path)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    fixed = {vi.name: b.shapes[cname[vi.name]] for vi in m.graph.input
             if cname.get(vi.name) in b.inputs}
    for vi in m.graph.input:
        if vi.name in fixed:
            vi.type.tensor_type.shape.Clear()
            for d in fixed[vi.name]:
                vi.type.tensor_type.shape.dim.add().dim_value = d
    try:
        m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    except (onnx.shape_inference.InferenceError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "failed"
        raise TvmdevError(f"ONNX shape inference: {first}", str(path)) from None
    dtypes, hints = {}, {}
    for vi in [*m.graph.value_info, *m.graph.output, *m.graph.input]:
        dtypes[vi.name] = _dtype(onnx, vi.type)
        dims = _dims(vi.type) if dtypes[vi.name] != "untyped" else None
        if dims is not None and all(isinstance(d, int) and d > 0 for d in dims):
            hints[vi.name] = tuple(int(d) for d in dims)
    return dtypes, hints


def _names(model: Any) -> dict[str, str]:
    """C names of every tensor: inputs first, then outputs, then the rest."""
    g = model.graph
    order = [vi.name for vi in g.input] + [vi.name for vi in g.output]
    order += [t.name for t in g.initializer]
    order += [o for n in g.node for o in n.output if o]
    order = list(dict.fromkeys(order))
    return dict(zip(order, c_names(order), strict=True))


def _removed(node: Any, consts: dict[str, np.ndarray]) -> bool:
    """Identity, and Dropout in inference (no training_mode, or a constant false, and no
    mask read): the output is the input."""
    if node.op_type == "Identity":
        return True
    if node.op_type != "Dropout" or (len(node.output) > 1 and node.output[1]):
        return False
    if len(node.input) > 2 and node.input[2]:
        mode = consts.get(node.input[2])
        return mode is not None and not bool(np.ravel(mode).any())
    return True


def _initializers(model: Any, path: Path) -> dict[str, np.ndarray]:
    onnx = _package(path)
    consts = {}
    for t in model.graph.initializer:
        try:
            consts[t.name] = np.array(onnx.numpy_helper.to_array(t), order="C")
        except (ValueError, TypeError, KeyError):
            raise TvmdevError(f"initializer '{t.name}': corrupt data", str(path)) from None
    return consts


def _graph(model: Any, path: Path, cname: dict[str, str], consts: dict[str, np.ndarray],
           typed: tuple[dict[str, str], dict[str, Shape]]
           ) -> tuple[Graph, set[int], set[str]]:
    """The converters' view of the graph, the nodes removed (Identity, inference Dropout)
    and the outputs that need a copy. An output a removed node passes on names the
    tensor it stands for; when that is an input, a constant, another output or already
    named, the output is a copy of it."""
    nodes, outputs = model.graph.node, tuple(vi.name for vi in model.graph.output)
    readers = {o: 1 for o in outputs}
    for n in nodes:
        for t in n.input:
            readers[t] = readers.get(t, 0) + 1
    versions = {imp.domain: imp.version for imp in model.opset_import}
    g = Graph(path, versions.get("", versions.get("ai.onnx", 0)), dict(cname), {}, consts,
              *typed, {}, outputs)
    removed = set()
    for i, n in enumerate(nodes):
        mask_read = len(n.output) > 1 and n.output[1] and readers.get(n.output[1])
        if n.domain in DOMAINS and _removed(n, consts) and not mask_read and n.input:
            g.alias[n.output[0]] = n.input[0]
            removed.add(i)
    produced = {o for i, n in enumerate(nodes) if i not in removed for o in n.output}
    copies, named = set(), set()
    for o in outputs:
        r = g.resolve(o)
        if r != o and r in produced and r not in outputs and r not in named:
            g.cname[r] = cname[o]
            named.add(r)
        elif r != o:
            copies.add(o)
    for i, n in enumerate(nodes):
        for t in n.input if i not in removed else ():
            if t:
                g.uses[g.resolve(t)] = g.uses.get(g.resolve(t), 0) + 1
    for o in outputs:
        g.uses[g.resolve(o)] = g.uses.get(g.resolve(o), 0) + 1
    return g, removed, copies


def _outputs(model: Any, b: Builder, g: Graph, copies: set[str]) -> list[str]:
    """The model's outputs; each of ``copies`` a reshape to the same shape (a copy) of
    the tensor it stands for."""
    outs = []
    for vi in model.graph.output:
        src = g.cname[g.resolve(vi.name)]
        if vi.name in copies:
            if not b.unsupported and src in b.shapes and g.resolve(vi.name) not in g.consts:
                b.emit("Identity", "reshape", [src], g.cname[vi.name],
                       {"shape": list(b.shapes[src])})
            src = g.cname[vi.name]
        outs.append(src)
    if not b.unsupported:
        written = {t for op in b.operators for t in op["outputs"]}
        for vi, o in zip(model.graph.output, outs, strict=True):
            if o not in written:
                raise TvmdevError(f"output '{vi.name}' is not computed by any operator (it "
                                  "is an input or known at import)", str(g.path))
    return outs


def _dropout(ctx: Context) -> None:
    raise Unsupported("training mode or mask output")


def _kind(node: Any) -> str:
    return node.op_type if node.domain in DOMAINS else f"{node.domain}.{node.op_type}"


def _convert_node(b: Builder, g: Graph, node: Any, i: int) -> None:
    kind = _kind(node)
    attrs = {a.name: _attr(a) for a in node.attribute}
    ctx = Context(b, g, node, i, attrs)
    known = all(not ctx.has(j) or ctx.const(j) is not None or g.cname[ctx.name(j)] in b.shapes
                for j in range(len(node.input)))
    converter = CONVERTERS.get(node.op_type) if node.domain in DOMAINS else None
    if node.op_type in REMOVED and node.domain in DOMAINS:  # a Dropout not removed
        converter = _dropout
    try:
        folds = node.domain in DOMAINS and node.op_type in FOLDERS
        if not known:  # an operand comes from a refused node: only that one is listed
            if converter is None and not folds:
                raise Unsupported()
            return
        if folds and foldable(ctx):
            fold(ctx)
            return
        if converter is None:
            raise Unsupported("of a tensor computed at run time" if folds else "")
        bad = sorted({g.dtypes[o] for o in node.output
                      if o and g.dtypes.get(o, "float32") != "float32"})
        if bad:
            raise Unsupported(", ".join(bad))
        before = len(b.operators)
        converter(ctx)
        for k in range(before, len(b.operators)):
            g.producer[b.operators[k]["outputs"][0]] = k
    except Unsupported as exc:
        b.refuse(kind, exc.detail, _node_name(node, i))
        for o in node.output:  # later nodes still convert, to list every refusal at once
            if o in g.hints:
                b.shapes.setdefault(g.cname[o], g.hints[o])


def _attr(a: Any) -> Any:
    from onnx import helper, numpy_helper
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "data_type"):  # a TensorProto
        return numpy_helper.to_array(value)
    return value


def convert(path: Path, raw: bytes, name: str,
            input_shapes: dict[str, Shape] | None = None) -> Imported:
    """Import the .onnx model in ``raw`` (read from ``path``) as model ``name``."""
    model = read(path, raw)
    _structure(model, path)
    cname = _names(model)
    b = Builder(path)
    for c in cname.values():
        b.reserve(c)
    _inputs(model, path, dict(input_shapes or {}), cname, b)
    typed = _typed(model, path, b, cname)
    for vi in model.graph.output:
        if typed[0].get(vi.name, "float32") not in ("float32", "untyped"):
            raise TvmdevError(f"output '{vi.name}' is {typed[0][vi.name]}; tvmdev imports "
                              "float32 models for now", str(path))
    g, removed, copies = _graph(model, path, cname, _initializers(model, path), typed)
    for i, node in enumerate(model.graph.node):
        b.summary[_kind(node)] = b.summary.get(_kind(node), 0) + 1
        if i not in removed:
            _convert_node(b, g, node, i)
    outs = _outputs(model, b, g, copies)
    mapped = sorted({*CONVERTERS, *REMOVED, *FOLDERS})
    return b.finish(name, outs, hint="tvmdev maps these ONNX operators: " + ", ".join(mapped)
                    + " (shape arithmetic only where its operands are known at import)")
