"""The model description: loaded from YAML (or JSON) into frozen dataclasses.

Every error names the file, the line and the item. Shapes of intermediate tensors are
inferred here, in operator order, and checked against the declared outputs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import naming
from ..errors import TvmdevError, Where
from ..model.device import device_name
from ..model.graph import Device, Model, Operator, Tensor
from ..model.ops import DTYPES, OPS, resolved_attrs
from ..model.quant import Q4Weight, quantize
from ..model.shapes import Shape, ShapeError, numel
from . import yamlio

MODEL_KEYS = ("name", "devices", "inputs", "outputs", "constants", "operators")
OP_KEYS = ("name", "op", "inputs", "outputs", "attrs", "device")
TENSOR_KEYS = ("shape", "dtype")
CONST_SOURCES = ("npy", "values", "random")
QUANT_KEYS = ("bits", "block")
RANDOM_KEYS = ("seed", "low", "high")


def _err(msg: str, where: Where, hint: str | None = None) -> TvmdevError:
    return TvmdevError(msg, where, hint)


def _mapping(node: Any, what: str, where: Where) -> yamlio.LineDict:
    if not isinstance(node, dict):
        raise _err(f"{what} must be a mapping", where)
    return node  # type: ignore[return-value]


def _keys(node: yamlio.LineDict, allowed: tuple[str, ...], what: str) -> None:
    for key in node:
        if key not in allowed:
            raise _err(f"unknown key '{key}' in {what}", node.where(key),
                       hint="allowed keys: " + ", ".join(allowed))


def _shape(node: Any, what: str, where: Where) -> Shape:
    if not isinstance(node, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in node):
        raise _err(f"shape of {what} must be a list of integers", where)
    if any(d <= 0 for d in node):
        raise _err(f"shape of {what} has a dimension <= 0: {list(node)}", where)
    if len(node) > 6:
        raise _err(f"shape of {what} has {len(node)} dims; at most 6 are supported", where)
    return tuple(node)


def _dtype(node: Any, what: str, where: Where) -> str:
    if node not in DTYPES:
        raise _err(f"unknown dtype {node!r} for {what}", where,
                   hint="supported dtypes: " + ", ".join(DTYPES))
    return str(node)


def _cname(name: str, what: str, where: Where, taken: dict[str, str]) -> str:
    """The C spelling of a name, unique among ``taken`` (case-insensitively, since names
    also appear upper-cased in macros)."""
    if not isinstance(name, str) or not name:
        raise _err(f"{what} name must be a non-empty string", where)
    c = naming.sanitize(name)
    if c.startswith("_"):
        c = "t" + c
    try:
        naming.check_identifier(c, f"{what} '{name}'", where)
    except TvmdevError as exc:
        raise _err(f"{exc.message} once converted to C", where, "rename it") from None
    key = c.upper()
    if key in taken:
        other = taken[key]
        if other == name:
            raise _err(f"duplicate name '{name}'", where, hint="names must be unique")
        raise _err(f"{what} '{name}' collides with '{other}' once converted to C ({c})",
                   where, hint="rename one of them")
    taken[key] = name
    return c


def _constant(name: str, node: yamlio.LineDict, base: Path) -> tuple[Shape, str, np.ndarray]:
    where = node.where()
    _keys(node, TENSOR_KEYS + CONST_SOURCES + ("quantize",), f"constant '{name}'")
    for key in TENSOR_KEYS:
        if key not in node:
            raise _err(f"constant '{name}' needs '{key}'", where)
    shape = _shape(node["shape"], f"constant '{name}'", node.where("shape"))
    dtype = _dtype(node["dtype"], f"constant '{name}'", node.where("dtype"))
    sources = [k for k in CONST_SOURCES if k in node]
    if len(sources) != 1:
        raise _err(f"constant '{name}' needs exactly one of npy, values, random", where)
    src = sources[0]
    swhere = node.where(src)
    if src == "npy":
        path = base / str(node["npy"])
        if not path.is_file():
            raise _err(f"constant '{name}': no such .npy file: {node['npy']}", swhere,
                       hint=f"paths are relative to the model file ({base})")
        try:
            data = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise _err(f"constant '{name}': cannot read {node['npy']}: {exc}", swhere) from None
        if tuple(data.shape) != shape:
            raise _err(f"constant '{name}': {node['npy']} has shape {list(data.shape)}, "
                       f"declared {list(shape)}", swhere)
        data = data.astype(dtype)
    elif src == "values":
        values = node["values"]
        if not isinstance(values, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise _err(f"constant '{name}': values must be a flat list of numbers", swhere)
        if len(values) != numel(shape):
            raise _err(f"constant '{name}': {len(values)} values for shape {list(shape)} "
                       f"({numel(shape)} elements)", swhere)
        data = np.asarray(values, dtype=dtype).reshape(shape)
    else:
        rnd = _mapping(node["random"], f"random of constant '{name}'", swhere)
        _keys(rnd, RANDOM_KEYS, f"random of constant '{name}'")
        for key in RANDOM_KEYS:
            if key not in rnd or isinstance(rnd[key], bool) or not isinstance(
                    rnd[key], (int, float)):
                raise _err(f"random of constant '{name}' needs a number '{key}'", swhere)
        if not isinstance(rnd["seed"], int) or rnd["seed"] < 0:
            raise _err(f"random of constant '{name}': seed must be an integer >= 0", swhere)
        data = np.random.default_rng(rnd["seed"]).uniform(
            rnd["low"], rnd["high"], shape).astype(dtype)
    if not np.all(np.isfinite(data)):
        raise _err(f"constant '{name}' has values that are not finite", swhere)
    data = np.ascontiguousarray(data)
    data.setflags(write=False)
    return shape, dtype, data


def load_model(path: Path) -> Model:
    """Load and check a model description."""
    path = Path(path)
    doc = yamlio.load(path)
    file = str(path)
    if doc is None:
        raise _err("the model is empty", Where(file, 1),
                   hint="a model needs name, inputs, outputs and operators")
    top = _mapping(doc, "a model", Where(file, 1))
    _keys(top, MODEL_KEYS, "the model")
    for key in ("name", "inputs", "outputs", "operators"):
        if key not in top:
            raise _err(f"the model needs '{key}'", top.where(), hint="see the README")
    name = top["name"]
    naming.check_identifier(name, "model name", top.where("name"))
    loader = _ModelLoader(path)
    loader.devices(_mapping(top.get("devices") or {}, "devices", top.where("devices")))
    in_node = loader.io_tensors(top, "inputs", "input")
    out_node = loader.io_tensors(top, "outputs", "output")
    loader.constants(_mapping(top.get("constants") or {}, "constants", top.where("constants")))
    loader.operators(top)
    for t in out_node:
        if t not in loader.written:
            raise _err(f"output '{t}' is never written by an operator", out_node.where(t))
    quantized = loader.quantize()
    return Model(name=name, path=file, devices=tuple(loader.device_list),
                 inputs=tuple(in_node), outputs=tuple(out_node), constants=loader.consts,
                 operators=tuple(loader.ops), tensors=loader.tensors, quantized=quantized)


class _ModelLoader:
    """The sections of a model, loaded in order; each checks against what came before."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.taken: dict[str, str] = {}  # C spellings of tensor names
        self.device_list: list[Device] = []
        self.tensors: dict[str, Tensor] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.to_quantize: dict[str, tuple[int, Where]] = {}
        self.ops: list[Operator] = []
        self.written: dict[str, str] = {}  # tensor -> the operator that writes it
        self.inferred: dict[str, Shape] = {}
        self.op_taken: dict[str, str] = {}

    def devices(self, node: yamlio.LineDict) -> None:
        dev_taken: dict[str, str] = {}
        for dname, dnode in node.items():
            w = node.where(dname)
            _cname(dname, "device", w, dev_taken)
            naming.check_identifier(dname, "device instance", w)
            dnode = _mapping(dnode, f"device '{dname}'", w)
            _keys(dnode, ("kind",), f"device '{dname}'")
            if "kind" not in dnode:
                raise _err(f"device '{dname}' needs a kind", w,
                           hint="for example: {kind: woofles}")
            kind = device_name(str(dnode["kind"]), dnode.where("kind"))
            self.device_list.append(Device(dname, kind, w))

    def io_tensors(self, top: yamlio.LineDict, key: str, role: str) -> yamlio.LineDict:
        node = _mapping(top[key], key, top.where(key))
        if not node:
            raise _err(f"the model has no {key}", top.where(key))
        for tname, tnode in node.items():
            w = node.where(tname)
            cname = _cname(tname, role, w, self.taken)
            tnode = _mapping(tnode, f"{role} '{tname}'", w)
            _keys(tnode, TENSOR_KEYS, f"{role} '{tname}'")
            if "shape" not in tnode or "dtype" not in tnode:
                raise _err(f"{role} '{tname}' needs shape and dtype", w)
            self.tensors[tname] = Tensor(
                tname, _shape(tnode["shape"], f"{role} '{tname}'", w),
                _dtype(tnode["dtype"], f"{role} '{tname}'", tnode.where("dtype")), role,
                cname, w)
        return node

    def constants(self, node: yamlio.LineDict) -> None:
        for name, cnode in node.items():
            if isinstance(cnode, yamlio.LineDict) and "quantize" in cnode:
                self.to_quantize[name] = _quantize_spec(name, cnode)
            w = node.where(name)
            c = _cname(name, "constant", w, self.taken)
            shape, dtype, data = _constant(name, _mapping(cnode, f"constant '{name}'", w),
                                           self.path.parent)
            self.consts[name] = data
            self.tensors[name] = Tensor(name, shape, dtype, "constant", c, w)

    def operators(self, top: yamlio.LineDict) -> None:
        ops_node = top["operators"]
        if not isinstance(ops_node, yamlio.LineList):
            raise _err("operators must be a list", top.where("operators"))
        if not ops_node:
            raise _err("the model has no operators", top.where("operators"),
                       hint="list at least one operator")
        for i, onode in enumerate(ops_node):
            self.operator(i, _mapping(onode, f"operator {i}", ops_node.where(i)),
                          ops_node.where(i))

    def operator(self, i: int, onode: yamlio.LineDict, w: Where) -> None:
        _keys(onode, OP_KEYS, f"operator {i}")
        for key in ("name", "op", "inputs", "outputs"):
            if key not in onode:
                raise _err(f"operator {i} needs '{key}'", w)
        oname = onode["name"]
        ocname = _cname(oname, "operator", onode.where("name"), self.op_taken)
        opname = onode["op"]
        if opname not in OPS:
            raise _err(f"operator '{oname}': unknown op '{opname}'", onode.where("op"),
                       hint="known ops: " + ", ".join(OPS))
        opdef = OPS[opname]
        ins, outs = onode["inputs"], onode["outputs"]
        if not isinstance(ins, list) or not isinstance(outs, list):
            raise _err(f"operator '{oname}': inputs and outputs must be lists", w)
        if not opdef.takes(len(ins)):
            raise _err(f"operator '{oname}': {opname} takes "
                       f"{opdef.required_inputs}" + (" or more" if opdef.variadic else
                       f" to {len(opdef.inputs)}" if len(opdef.inputs) !=
                       opdef.required_inputs else "") +
                       f" inputs ({', '.join(opdef.inputs)}), got {len(ins)}",
                       onode.where("inputs"))
        if len(outs) != len(opdef.outputs):
            raise _err(f"operator '{oname}': {opname} has {len(opdef.outputs)} output, "
                       f"got {len(outs)}", onode.where("outputs"))
        in_names, shapes = self.operator_inputs(oname, opdef.arg_names(len(ins)),
                                                opdef.optional, ins, onode, w)
        attrs_node = _mapping(onode.get("attrs") or {}, f"attrs of '{oname}'",
                              onode.where("attrs"))
        try:
            attrs = resolved_attrs(opdef, shapes, dict(attrs_node))
            out_shape = opdef.infer(shapes, attrs)
        except ShapeError as exc:
            raise _err(f"operator '{oname}' ({opname}): {exc}", w) from None
        out_names = self.operator_outputs(oname, opname, outs, out_shape, onode, w)
        device = onode.get("device")
        if device is not None and device not in {d.name for d in self.device_list}:
            raise _err(f"operator '{oname}' runs on unknown device '{device}'",
                       onode.where("device"),
                       hint="declared devices: " + (", ".join(d.name for d in self.device_list)
                                                   or "none"))
        self.ops.append(Operator(i, oname, opname, tuple(in_names), tuple(out_names),
                                 tuple(sorted(attrs.items())), device, ocname, w))

    def operator_inputs(self, oname: str, args: tuple[str, ...], optional: frozenset[str],
                        ins: list[Any], onode: yamlio.LineDict, w: Where
                        ) -> tuple[list[str | None], list[Shape | None]]:
        in_names: list[str | None] = []
        shapes: list[Shape | None] = []
        for j, t in enumerate(ins):
            if t in ("", None) and args[j] in optional:
                in_names.append(None)
                shapes.append(None)
                continue
            if not isinstance(t, str):
                raise _err(f"operator '{oname}': input {j} must be a tensor name", w)
            known = self.tensors.get(t)
            if known is not None and known.role in ("input", "constant"):
                shapes.append(known.shape)
            elif t in self.written:
                shapes.append(self.inferred[t])
            elif known is not None and known.role == "output":
                raise _err(f"operator '{oname}' reads output '{t}' before any operator "
                           "writes it", onode.where("inputs"))
            else:
                raise _err(f"operator '{oname}' reads '{t}', which no earlier operator "
                           "writes and which is not an input or constant",
                           onode.where("inputs"), hint="operators run in the order listed")
            in_names.append(t)
        return in_names, shapes

    def operator_outputs(self, oname: str, opname: str, outs: list[Any], out_shape: Shape,
                         onode: yamlio.LineDict, w: Where) -> list[str]:
        out_names: list[str] = []
        for t in outs:
            if not isinstance(t, str) or not t:
                raise _err(f"operator '{oname}': outputs must be tensor names", w)
            if t in self.written:
                raise _err(f"tensor '{t}' has two writers: '{self.written[t]}' and "
                           f"'{oname}'", onode.where("outputs"),
                           hint="each tensor is written once")
            declared = self.tensors.get(t)
            if declared is not None and declared.role in ("input", "constant"):
                raise _err(f"operator '{oname}' writes '{t}', which is a model "
                           f"{declared.role}", onode.where("outputs"))
            if declared is not None:  # a model output: the declared shape must match
                if declared.shape != out_shape:
                    raise _err(f"output '{t}' is declared {list(declared.shape)} but "
                               f"'{oname}' ({opname}) produces {list(out_shape)}",
                               onode.where("outputs"), hint="fix the declared shape")
            else:
                self.tensors[t] = Tensor(t, out_shape, "float32", "intermediate",
                                         _cname(t, "tensor", onode.where("outputs"),
                                                self.taken), onode.where("outputs"))
            self.written[t] = oname
            self.inferred[t] = out_shape
            out_names.append(t)
        return out_names

    def quantize(self) -> dict[str, Q4Weight]:
        """Quantise the constants marked ``quantize`` (the B of gemm operators only)."""
        quantized: dict[str, Q4Weight] = {}
        for name, (block, qwhere) in self.to_quantize.items():
            uses = [(op, j) for op in self.ops for j, t in enumerate(op.inputs) if t == name]
            if not uses or any(op.op != "gemm" or j != 1 for op, j in uses):
                raise _err(f"constant '{name}': a 4-bit constant must be the B of gemm "
                           "operators only", qwhere)
            trans = {op.attr_dict["transB"] for op, _ in uses}
            if len(trans) != 1:
                raise _err(f"constant '{name}': used with and without transB", qwhere)
            weights = self.consts[name]
            w_nk = weights if trans.pop() else weights.T  # N x K
            if w_nk.shape[1] % block:
                raise _err(f"constant '{name}': K = {w_nk.shape[1]} is not a multiple of "
                           f"the block ({block})", qwhere)
            q = quantize(w_nk, block)
            deq = q.dequantize()
            self.consts[name] = deq if w_nk is weights else np.ascontiguousarray(deq.T)
            self.consts[name].setflags(write=False)
            quantized[name] = q
            self.tensors[name] = replace(self.tensors[name], dtype="q4c32")
        return quantized


def _quantize_spec(name: str, cnode: yamlio.LineDict) -> tuple[int, Where]:
    qn = _mapping(cnode["quantize"], f"quantize of constant '{name}'", cnode.where("quantize"))
    _keys(qn, QUANT_KEYS, f"quantize of constant '{name}'")
    if qn.get("bits") != 4:
        raise _err(f"constant '{name}': only 4-bit quantisation is supported",
                   qn.where("bits"), hint="quantize: {bits: 4, block: 32}")
    block = qn.get("block")
    if not isinstance(block, int) or isinstance(block, bool) or block <= 0 or block % 32:
        raise _err(f"constant '{name}': block must be a positive multiple of 32",
                   qn.where("block") if "block" in qn else qn.where())
    return block, qn.where()
