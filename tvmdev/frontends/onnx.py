"""The ONNX front end: a ``.onnx`` model read with the ``onnx`` package (the ``onnx``
extra), checked with ``onnx.checker``, typed with ``onnx.shape_inference``, and its one
graph converted node by node (the table in :mod:`.onnx_ops`) into a tvmdev model.

Initializers are known values: float32 ones become constants where an operator reads
them; integer ones only feed shape arithmetic, which is evaluated at import
(:mod:`.onnx_fold`), as are ``Identity`` and inference ``Dropout``, which are removed.
Inputs and outputs keep the model's order and are named after its tensor names made
into C identifiers. Layouts stay NCHW. A quantized model (QDQ or QLinear operators) is
lowered to int8 operators by :mod:`.onnx_qdq_lower` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.shapes import Shape
from .custom import onnx_converter
from .graph import Builder, Imported, Unsupported, c_names
from .onnx_context import Context, Graph, node_label, op_kind, operator_page
from .onnx_fold import FOLDERS, fold, foldable
from .onnx_indices import INDEX_DTYPES, check_index_input
from .onnx_ops import CONVERTERS
from .onnx_qdq import quantized
from .onnx_qdq_lower import convert as convert_quantized
from .onnx_read import check_structure, package, read, shown_dims, value_dims, value_dtype
from .onnx_versions import unknown_version

DOMAINS = ("", "ai.onnx")
REMOVED = ("Identity", "Dropout")
FLOAT_HINT = "export the model in float32 (its inputs, outputs and weights); int8 comes next"


def _given_shape(vi: Any, key: str, cname: str, dims: list[int | str] | None, shape: Shape,
                 path: Path) -> Shape:
    """An --input-shape for ``vi``: it sets dynamic dims only (the declared rank, and every
    static dim as declared)."""
    if dims is None or (len(shape) == len(dims) and all(
            not isinstance(d, int) or d <= 0 or d == s for d, s in zip(dims, shape,
                                                                       strict=True))):
        return shape
    fixed = (",".join(str(s if not isinstance(d, int) or d <= 0 else d)
                      for d, s in zip(dims, shape, strict=True)) if len(shape) == len(dims) else
             ",".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in dims))
    raise TvmdevError(f"--input-shape {key}={','.join(map(str, shape))}: input "
                      f"'{vi.name}' is declared {shown_dims(dims)}; the option sets its "
                      "dynamic dims only", str(path),
                      hint=f"fix it: --input-shape {cname}={fixed}")


def _input_shape(vi: Any, cname: str, given: dict[str, Shape], path: Path) -> Shape:
    dims = value_dims(vi.type)
    for key in (vi.name, cname):
        if key in given:
            return _given_shape(vi, key, cname, dims, given.pop(key), path)
    if dims is None or any(not isinstance(d, int) or d <= 0 for d in dims):
        shown = "no shape" if dims is None else f"a dynamic shape {shown_dims(dims)}"
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
    onnx = package(path)
    inits = {t.name for t in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in inits]
    unknown = set(given) - {n for vi in inputs for n in (vi.name, cname[vi.name])}
    if unknown:
        raise TvmdevError(f"--input-shape {', '.join(sorted(unknown))}: no such input",
                          str(path), hint="inputs: " + ", ".join(cname[vi.name]
                                                                 for vi in inputs))
    for vi in inputs:
        dtype = value_dtype(onnx, vi.type)
        if dtype in INDEX_DTYPES:
            note = check_index_input(model, vi, dtype, path)
            b.notes += [note] if note else []
        elif dtype != "float32":
            raise TvmdevError(f"input '{vi.name}' is {dtype}; tvmdev imports float32 "
                              "models for now", str(path), hint=FLOAT_HINT)
        b.add_input(cname[vi.name], _input_shape(vi, cname[vi.name], given, path),
                    "int32" if dtype in INDEX_DTYPES else "float32")


def _typed(model: Any, path: Path, b: Builder, cname: dict[str, str]
           ) -> tuple[dict[str, str], dict[str, Shape]]:
    """Dtypes and static shapes of the model's values by ONNX's shape inference, with
    the inputs' shapes as imported."""
    onnx = package(path)
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
        dtypes[vi.name] = value_dtype(onnx, vi.type)
        dims = value_dims(vi.type) if dtypes[vi.name] != "untyped" else None
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


def _opset(model: Any) -> int:
    """The model's opset of the default domain."""
    versions = {imp.domain: imp.version for imp in model.opset_import}
    return int(versions.get("", versions.get("ai.onnx", 0)))


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
    onnx = package(path)
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
    g = Graph(path, _opset(model), dict(cname), {}, consts, *typed, {}, outputs)
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
        value = g.consts.get(g.resolve(vi.name))
        if value is not None and value.dtype == np.float32 and not b.unsupported:
            # Known at import (a Constant): the run copies it out, as ONNX Runtime returns it.
            known = b.constant(b.fresh(f"{src}_value"), value)
            b.emit("Constant", "reshape", [known], src, {"shape": list(value.shape)})
            outs.append(src)
            continue
        if vi.name in copies:
            if not b.unsupported and src in b.shapes and g.resolve(vi.name) not in g.consts:
                b.emit("Identity", "reshape", [src], g.cname[vi.name],
                       {"shape": list(b.shapes[src])})
            src = g.cname[vi.name]
        outs.append(src)
    if not b.unsupported:
        written = {op.output for op in b.operators}
        for vi, o in zip(model.graph.output, outs, strict=True):
            if o not in written:
                raise TvmdevError(f"output '{vi.name}' is not computed by any operator (it "
                                  "is a graph input)", str(g.path),
                                  hint="tvmdev compiles what operators compute: drop it from "
                                       "the graph's outputs (the application has its value)")
            note = _check_declared(model, vi, b.shapes[o], g.path)
            if note:
                b.notes.append(note)
    return outs


def _check_declared(model: Any, vi: Any, shape: Shape, path: Path) -> str | None:
    """A graph output's computed shape against the one the model declares: its rank and
    every static dim. The one known disagreement of onnx's shape inference with ONNX
    Runtime (a ceil_mode pool's last window) is a note, as ONNX Runtime warns and runs
    with the computed shape; anything else is an error."""
    dims = value_dims(vi.type)
    if dims is None or (len(dims) == len(shape) and all(
            not isinstance(d, int) or d <= 0 or d == s
            for d, s in zip(dims, shape, strict=True))):
        return None
    ceil = any(n.op_type in ("MaxPool", "AveragePool")
               and any(a.name == "ceil_mode" and a.i for a in n.attribute)
               for n in model.graph.node)
    said = f"output '{vi.name}' is declared {shown_dims(dims)}; its operators compute " \
           f"{list(shape)}"
    if ceil and len(dims) == len(shape) and all(
            not isinstance(d, int) or d <= 0 or d - n in (0, 1)
            for d, n in zip(dims, shape, strict=True)):
        return (f"{path}: {said}, as ONNX Runtime computes it (onnx.shape_inference keeps a "
                "ceil_mode pool's last window where it would start in the padding; ONNX "
                "Runtime and tvmdev drop it)")
    raise TvmdevError(said, str(path), hint="fix or drop the model's declaration")


def _dropout(ctx: Context) -> None:
    raise Unsupported("training mode or mask output")


def _convert_node(b: Builder, g: Graph, node: Any, i: int) -> None:
    kind = op_kind(node)
    attrs = {a.name: _attr(a) for a in node.attribute}
    ctx = Context(b, g, node, i, attrs)
    known = all(not ctx.has(j) or ctx.const(j) is not None or g.cname[ctx.name(j)] in b.shapes
                for j in range(len(node.input)))
    custom = onnx_converter(node.domain, node.op_type)
    converter = CONVERTERS.get(node.op_type) if node.domain in DOMAINS else None
    if node.op_type in REMOVED and node.domain in DOMAINS:  # a Dropout not removed
        converter = _dropout
    converter = custom or converter
    try:
        folds = node.domain in DOMAINS and node.op_type in FOLDERS and custom is None
        stale = unknown_version(package(g.path), node.op_type, g.opset) \
            if node.domain in DOMAINS and custom is None else None
        if stale:
            raise Unsupported(stale)
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
            g.producer[b.operators[k].output] = k
    except Unsupported as exc:
        b.refuse(kind, exc.detail, node_label(node, i))
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
    check_structure(model, path)
    cname = _names(model)
    b = Builder(path)
    b.kind_hint = operator_page
    for c in cname.values():
        b.reserve(c)
    _inputs(model, path, dict(input_shapes or {}), cname, b)
    typed = _typed(model, path, b, cname)
    for vi in model.graph.output:
        if typed[0].get(vi.name, "float32") not in ("float32", "untyped"):
            raise TvmdevError(f"output '{vi.name}' is {typed[0][vi.name]}; tvmdev imports "
                              "float32 models for now", str(path), hint=FLOAT_HINT)
    if quantized(model):
        for i, node in enumerate(model.graph.node):  # the float path checks as it converts
            stale = unknown_version(package(path), node.op_type, _opset(model)) \
                if node.domain in DOMAINS else None
            if stale:
                b.refuse(op_kind(node), stale, node_label(node, i))
        return convert_quantized(model, path, name, b, cname, typed[1],
                                 _initializers(model, path))
    g, removed, copies = _graph(model, path, cname, _initializers(model, path), typed)
    for i, node in enumerate(model.graph.node):
        b.summary[op_kind(node)] = b.summary.get(op_kind(node), 0) + 1
        if i not in removed:
            _convert_node(b, g, node, i)
    outs = _outputs(model, b, g, copies)
    mapped = sorted({*CONVERTERS, *REMOVED, *FOLDERS})
    return b.finish(name, outs, hint="tvmdev maps these ONNX operators: " + ", ".join(mapped)
                    + " (shape arithmetic only where its operands are known at import)")
