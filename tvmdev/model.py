"""The model description: loaded from YAML (or JSON) into frozen dataclasses.

Every error names the file, the line and the item. Shapes of intermediate tensors are
inferred here, in operator order, and checked against the declared outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import naming, yamlio
from .devices import device_name
from .errors import TvmdevError, Where
from .ops import DTYPES, OPS, Shape, ShapeError, check_attrs, numel
from .quant import Q4Weight, quantize

MODEL_KEYS = ("name", "devices", "inputs", "outputs", "constants", "operators")
OP_KEYS = ("name", "op", "inputs", "outputs", "attrs", "device")
TENSOR_KEYS = ("shape", "dtype")
CONST_SOURCES = ("npy", "values", "random")
QUANT_KEYS = ("bits", "block")
RANDOM_KEYS = ("seed", "low", "high")
DTYPE_SIZE = {"float32": 4, "q4c32": 4}  # q4c32: constants only, sized as their floats


@dataclass(frozen=True)
class Device:
    name: str  # the instance, a member of struct tvmgen_<model>_devices
    kind: str  # the device kind: tvm_device_<kind>_t
    where: Where


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: Shape
    dtype: str
    role: str  # "input", "output", "constant" or "intermediate"
    cname: str  # the C spelling of the name
    where: Where

    @property
    def nbytes(self) -> int:
        return numel(self.shape) * DTYPE_SIZE[self.dtype]


@dataclass(frozen=True)
class Operator:
    index: int
    name: str
    op: str
    inputs: tuple[str | None, ...]  # None: an absent optional input
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...]
    device: str | None
    cname: str
    where: Where

    @property
    def attr_dict(self) -> dict[str, Any]:
        return dict(self.attrs)


@dataclass(frozen=True, eq=False)
class Model:
    name: str
    path: str
    devices: tuple[Device, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    constants: dict[str, np.ndarray]
    operators: tuple[Operator, ...]
    tensors: dict[str, Tensor]
    # Constants quantised to 4 bits: the quantised form (constants[] holds the dequantised
    # values, which the reference uses).
    quantized: dict[str, Q4Weight] = field(default_factory=dict)

    def device(self, name: str) -> Device:
        return next(d for d in self.devices if d.name == name)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The device kinds the model uses, in order of first appearance."""
        return tuple(dict.fromkeys(d.kind for d in self.devices))


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


def load(path: Path) -> Model:
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

    taken: dict[str, str] = {}
    devices: list[Device] = []
    dev_node = top.get("devices") or {}
    dev_node = _mapping(dev_node, "devices", top.where("devices"))
    dev_taken: dict[str, str] = {}
    for dname, dnode in dev_node.items():
        w = dev_node.where(dname)
        _cname(dname, "device", w, dev_taken)
        naming.check_identifier(dname, "device instance", w)
        dnode = _mapping(dnode, f"device '{dname}'", w)
        _keys(dnode, ("kind",), f"device '{dname}'")
        if "kind" not in dnode:
            raise _err(f"device '{dname}' needs a kind", w, hint="for example: {kind: woofles}")
        kind = device_name(str(dnode["kind"]), dnode.where("kind"))
        devices.append(Device(dname, kind, w))

    tensors: dict[str, Tensor] = {}
    in_node = _mapping(top["inputs"], "inputs", top.where("inputs"))
    out_node = _mapping(top["outputs"], "outputs", top.where("outputs"))
    if not in_node:
        raise _err("the model has no inputs", top.where("inputs"))
    if not out_node:
        raise _err("the model has no outputs", top.where("outputs"))
    for role, node in (("input", in_node), ("output", out_node)):
        for tname, tnode in node.items():
            w = node.where(tname)
            cname = _cname(tname, role, w, taken)
            tnode = _mapping(tnode, f"{role} '{tname}'", w)
            _keys(tnode, TENSOR_KEYS, f"{role} '{tname}'")
            if "shape" not in tnode or "dtype" not in tnode:
                raise _err(f"{role} '{tname}' needs shape and dtype", w)
            tensors[tname] = Tensor(tname, _shape(tnode["shape"], f"{role} '{tname}'", w),
                                    _dtype(tnode["dtype"], f"{role} '{tname}'",
                                           tnode.where("dtype")), role, cname, w)

    constants: dict[str, np.ndarray] = {}
    to_quantize: dict[str, tuple[int, Where]] = {}
    const_node = _mapping(top.get("constants") or {}, "constants", top.where("constants"))
    for cname_, cnode in const_node.items():
        if isinstance(cnode, yamlio.LineDict) and "quantize" in cnode:
            qn = _mapping(cnode["quantize"], f"quantize of constant '{cname_}'",
                          cnode.where("quantize"))
            _keys(qn, QUANT_KEYS, f"quantize of constant '{cname_}'")
            if qn.get("bits") != 4:
                raise _err(f"constant '{cname_}': only 4-bit quantisation is supported",
                           qn.where("bits"), hint="quantize: {bits: 4, block: 32}")
            block = qn.get("block")
            if not isinstance(block, int) or isinstance(block, bool) or block <= 0 or \
                    block % 32:
                raise _err(f"constant '{cname_}': block must be a positive multiple of 32",
                           qn.where("block") if "block" in qn else qn.where())
            to_quantize[cname_] = (block, qn.where())
        w = const_node.where(cname_)
        c = _cname(cname_, "constant", w, taken)
        shape, dtype, data = _constant(cname_, _mapping(cnode, f"constant '{cname_}'", w),
                                       path.parent)
        constants[cname_] = data
        tensors[cname_] = Tensor(cname_, shape, dtype, "constant", c, w)

    ops_node = top["operators"]
    if not isinstance(ops_node, yamlio.LineList):
        raise _err("operators must be a list", top.where("operators"))
    if not ops_node:
        raise _err("the model has no operators", top.where("operators"),
                   hint="list at least one operator")
    op_taken: dict[str, str] = {}
    written: dict[str, str] = {}
    operators: list[Operator] = []
    inferred: dict[str, Shape] = {}
    for i, onode in enumerate(ops_node):
        w = ops_node.where(i)
        onode = _mapping(onode, f"operator {i}", w)
        _keys(onode, OP_KEYS, f"operator {i}")
        for key in ("name", "op", "inputs", "outputs"):
            if key not in onode:
                raise _err(f"operator {i} needs '{key}'", w)
        oname = onode["name"]
        ocname = _cname(oname, "operator", onode.where("name"), op_taken)
        opname = onode["op"]
        if opname not in OPS:
            raise _err(f"operator '{oname}': unknown op '{opname}'", onode.where("op"),
                       hint="known ops: " + ", ".join(OPS))
        opdef = OPS[opname]
        ins = onode["inputs"]
        outs = onode["outputs"]
        if not isinstance(ins, list) or not isinstance(outs, list):
            raise _err(f"operator '{oname}': inputs and outputs must be lists", w)
        if not (opdef.required_inputs <= len(ins) <= len(opdef.inputs)):
            raise _err(f"operator '{oname}': {opname} takes "
                       f"{opdef.required_inputs}" + (f" to {len(opdef.inputs)}"
                       if len(opdef.inputs) != opdef.required_inputs else "") +
                       f" inputs ({', '.join(opdef.inputs)}), got {len(ins)}",
                       onode.where("inputs"))
        if len(outs) != len(opdef.outputs):
            raise _err(f"operator '{oname}': {opname} has {len(opdef.outputs)} output, "
                       f"got {len(outs)}", onode.where("outputs"))
        in_names: list[str | None] = []
        shapes: list[Shape | None] = []
        for j, t in enumerate(ins):
            argname = opdef.inputs[j]
            if t in ("", None) and argname in opdef.optional:
                in_names.append(None)
                shapes.append(None)
                continue
            if not isinstance(t, str):
                raise _err(f"operator '{oname}': input {j} must be a tensor name", w)
            if t in tensors and tensors[t].role in ("input", "constant"):
                shapes.append(tensors[t].shape)
            elif t in written:
                shapes.append(inferred[t])
            elif t in tensors and tensors[t].role == "output":
                raise _err(f"operator '{oname}' reads output '{t}' before any operator "
                           "writes it", onode.where("inputs"))
            else:
                raise _err(f"operator '{oname}' reads '{t}', which no earlier operator "
                           "writes and which is not an input or constant",
                           onode.where("inputs"), hint="operators run in the order listed")
            in_names.append(t)
        attrs_node = onode.get("attrs") or {}
        attrs_node = _mapping(attrs_node, f"attrs of '{oname}'", onode.where("attrs"))
        try:
            attrs = check_attrs(opdef, dict(attrs_node))
            out_shape = opdef.infer(shapes, attrs)
        except ShapeError as exc:
            raise _err(f"operator '{oname}' ({opname}): {exc}", w) from None
        out_names: list[str] = []
        for t in outs:
            if not isinstance(t, str) or not t:
                raise _err(f"operator '{oname}': outputs must be tensor names", w)
            if t in written:
                raise _err(f"tensor '{t}' has two writers: '{written[t]}' and '{oname}'",
                           onode.where("outputs"), hint="each tensor is written once")
            if t in tensors and tensors[t].role in ("input", "constant"):
                raise _err(f"operator '{oname}' writes '{t}', which is a model "
                           f"{tensors[t].role}", onode.where("outputs"))
            if t in tensors:  # a model output: the declared shape must match
                declared = tensors[t]
                if declared.shape != out_shape:
                    raise _err(f"output '{t}' is declared {list(declared.shape)} but "
                               f"'{oname}' ({opname}) produces {list(out_shape)}",
                               onode.where("outputs"), hint="fix the declared shape")
            else:
                tensors[t] = Tensor(t, out_shape, "float32", "intermediate",
                                    _cname(t, "tensor", onode.where("outputs"), taken),
                                    onode.where("outputs"))
            written[t] = oname
            inferred[t] = out_shape
            out_names.append(t)
        device = onode.get("device")
        if device is not None and device not in {d.name for d in devices}:
            raise _err(f"operator '{oname}' runs on unknown device '{device}'",
                       onode.where("device"),
                       hint="declared devices: " + (", ".join(d.name for d in devices)
                                                   or "none"))
        operators.append(Operator(i, oname, opname, tuple(in_names), tuple(out_names),
                                  tuple(sorted(attrs.items())), device, ocname, w))

    for t in out_node:
        if t not in written:
            raise _err(f"output '{t}' is never written by an operator", out_node.where(t))
    quantized: dict[str, Q4Weight] = {}
    for cname_, (block, qwhere) in to_quantize.items():
        uses = [(op, j) for op in operators for j, t in enumerate(op.inputs) if t == cname_]
        if not uses or any(op.op != "gemm" or j != 1 for op, j in uses):
            raise _err(f"constant '{cname_}': a 4-bit constant must be the B of gemm "
                       "operators only", qwhere)
        trans = {op.attr_dict["transB"] for op, _ in uses}
        if len(trans) != 1:
            raise _err(f"constant '{cname_}': used with and without transB", qwhere)
        weights = constants[cname_]
        w_nk = weights if trans.pop() else weights.T  # N x K
        if w_nk.shape[1] % block:
            raise _err(f"constant '{cname_}': K = {w_nk.shape[1]} is not a multiple of the "
                       f"block ({block})", qwhere)
        q = quantize(w_nk, block)
        deq = q.dequantize()
        constants[cname_] = deq if w_nk is weights else np.ascontiguousarray(deq.T)
        constants[cname_].setflags(write=False)
        quantized[cname_] = q
        tensors[cname_] = replace(tensors[cname_], dtype="q4c32")
    return Model(name=name, path=file, devices=tuple(devices), inputs=tuple(in_node),
                 outputs=tuple(out_node), constants=constants, operators=tuple(operators),
                 tensors=tensors, quantized=quantized)


def with_offload(model: Model, device: str, kind: str, ops: tuple[str, ...]) -> Model:
    """The model with the operators in ``ops`` that no device runs bound to a new device
    instance ``device`` of ``kind`` (a board's offload: gemm to KleidiAI on Arm hosts).
    Unchanged when no operator qualifies."""
    picked = [op for op in model.operators if op.device is None and op.op in ops]
    if not picked:
        return model
    name = device
    while any(d.name == name for d in model.devices):
        name += "_"
    new_ops = tuple(replace(op, device=name) if op in picked else op for op in model.operators)
    dev = Device(name, kind, Where(model.path))
    return replace(model, devices=(*model.devices, dev), operators=new_ops)
