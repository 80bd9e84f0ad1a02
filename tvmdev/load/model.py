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
from ..errors import Where, shown
from ..model.cnames import Namer
from ..model.device import MAX_DEVICES, device_name
from ..model.graph import Device, Model, Operator, Tensor
from ..model.limits import params_problem
from ..model.ops import OPS, op_params, resolved_attrs
from ..model.quant import Q4Weight, Quant, quantize
from ..model.shapes import Shape, ShapeError
from . import yamlio
from .constants import TENSOR_KEYS, constant, quantize_spec
from .fields import (
    attr_numbers,
    check_elements,
    dtype,
    err,
    keys,
    mapping,
    name_in,
    optional,
    shape,
)
from .platform import all_platforms
from .quantization import node_quant

MODEL_KEYS = ("name", "devices", "inputs", "outputs", "constants", "tensors", "operators")
# An intermediate tensor's declaration (``tensors:``): its dtype and quantization; its
# shape is inferred (and checked when given).
INTERMEDIATE_KEYS = ("shape", "dtype", "quant")
OP_KEYS = ("name", "op", "inputs", "outputs", "attrs", "device")




def load_model(path: Path) -> Model:
    """Load and check a model description."""
    path = Path(path)
    return model_from_doc(yamlio.load(path), path)


def model_from_doc(doc: Any, path: Path, arrays: dict[str, np.ndarray] | None = None
                   ) -> Model:
    """Check a model description already parsed (``yamlio.load`` or ``yamlio.wrap``);
    ``arrays`` holds the contents of its .npy files when they are not on disk."""
    file = str(path)
    if doc is None:
        raise err("the model is empty", Where(file, 1),
                   hint="a model needs name, inputs, outputs and operators")
    top = mapping(doc, "a model", Where(file, 1))
    keys(top, MODEL_KEYS, "the model")
    for key in ("name", "inputs", "outputs", "operators"):
        if key not in top:
            raise err(f"the model needs '{key}'", top.where(), hint="see the README")
    name = top["name"]
    naming.check_identifier(name, "model name", top.where("name"))
    loader = _ModelLoader(path, name, arrays or {})
    loader.devices(mapping(optional(top, "devices", {}), "devices", top.where("devices")),
                   top.where("devices"))
    in_node = loader.io_tensors(top, "inputs", "input")
    out_node = loader.io_tensors(top, "outputs", "output")
    loader.constants(mapping(optional(top, "constants", {}), "constants", top.where("constants")))
    loader.intermediates(mapping(optional(top, "tensors", {}), "tensors", top.where("tensors")))
    loader.operators(top)
    for t, (_, _, _, where) in loader.declared.items():
        if t not in loader.written:
            raise err(f"tensor {shown(t)} is declared under tensors but no operator writes it",
                      where, hint="tensors: declares the dtype and quant of intermediates")
    for t in out_node:
        if t not in loader.written:
            raise err(f"output {shown(t)} is never written by an operator", out_node.where(t))
    quantized = loader.quantize()
    return Model(name=name, path=file, devices=tuple(loader.device_list),
                 inputs=tuple(in_node), outputs=tuple(out_node), constants=loader.consts,
                 operators=tuple(loader.ops), tensors=loader.tensors, quantized=quantized)


class _ModelLoader:
    """The sections of a model, loaded in order; each checks against what came before."""

    def __init__(self, path: Path, name: str, arrays: dict[str, np.ndarray]) -> None:
        self.path = path
        self.arrays = arrays
        self.namer = Namer(name, all_platforms())  # the C spellings of every name
        self.device_list: list[Device] = []
        self.tensors: dict[str, Tensor] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.to_quantize: dict[str, tuple[int, Where]] = {}
        self.ops: list[Operator] = []
        self.written: dict[str, str] = {}  # tensor -> the operator that writes it
        self.inferred: dict[str, Shape] = {}
        self.op_names: set[str] = set()
        # tensors: intermediate name -> (dtype, quant, shape or None, where)
        self.declared: dict[str, tuple[str, Quant | None, Shape | None, Where]] = {}

    def devices(self, node: yamlio.LineDict, where: Where) -> None:
        if len(node) > MAX_DEVICES:
            raise err(f"the model declares {len(node)} devices; at most {MAX_DEVICES} are "
                      "supported", where)
        for dname, dnode in node.items():
            w = node.where(dname)
            naming.check_identifier(dname, "device instance", w)
            self.namer.device(dname, w)
            dnode = mapping(dnode, f"device {shown(dname)}", w)
            keys(dnode, ("kind",), f"device {shown(dname)}")
            if "kind" not in dnode:
                raise err(f"device {shown(dname)} needs a kind", w,
                           hint="for example: {kind: woofles}")
            kind = device_name(dnode["kind"], dnode.where("kind"))
            self.namer.kind(kind, dnode.where("kind"))
            self.device_list.append(Device(dname, kind, w))

    def io_tensors(self, top: yamlio.LineDict, key: str, role: str) -> yamlio.LineDict:
        node = mapping(top[key], key, top.where(key))
        if not node:
            raise err(f"the model has no {key}", top.where(key))
        for tname, tnode in node.items():
            w = node.where(tname)
            cname = self.tensor_cname(tname, role, w)
            tnode = mapping(tnode, f"{role} {shown(tname)}", w)
            keys(tnode, TENSOR_KEYS, f"{role} {shown(tname)}")
            if "shape" not in tnode or "dtype" not in tnode:
                raise err(f"{role} {shown(tname)} needs shape and dtype", w)
            what = f"{role} {shown(tname)}"
            dims = shape(tnode["shape"], what, w)
            dt = dtype(tnode["dtype"], what, tnode.where("dtype"))
            self.tensors[tname] = Tensor(tname, dims, dt, role, cname, w,
                                         node_quant(tnode, what, dt, dims))
        return node

    def intermediates(self, node: yamlio.LineDict) -> None:
        """``tensors:``: the dtype (default float32) and quant of intermediate tensors."""
        for tname, tnode in node.items():
            w = node.where(tname)
            what = f"tensor {shown(tname)}"
            if not isinstance(tname, str) or not tname:
                raise err(f"tensor name must be a non-empty string, not {shown(tname)}", w)
            if tname in self.tensors:
                raise err(f"{what} is a model {self.tensors[tname].role}: declare it there",
                          w, hint="tensors: declares intermediates only")
            tnode = mapping(tnode, what, w)
            keys(tnode, INTERMEDIATE_KEYS, what)
            dims = shape(tnode["shape"], what, tnode.where("shape")) if "shape" in tnode \
                else None
            dt = dtype(tnode.get("dtype", "float32"), what, tnode.where("dtype")
                       if "dtype" in tnode else w)
            self.declared[tname] = (dt, node_quant(tnode, what, dt, dims), dims, w)

    def constants(self, node: yamlio.LineDict) -> None:
        for name, cnode in node.items():
            w = node.where(name)
            quantized = isinstance(cnode, yamlio.LineDict) and "quantize" in cnode
            c = self.tensor_cname(name, "constant", w, quantized)  # checks the name first
            if quantized:
                self.to_quantize[name] = quantize_spec(name, cnode)
            cnode = mapping(cnode, f"constant {shown(name)}", w)
            dims, dt, data = constant(name, cnode, self.path.parent, self.arrays)
            self.consts[name] = data
            self.tensors[name] = Tensor(name, dims, dt, "constant", c, w,
                                        node_quant(cnode, f"constant {shown(name)}", dt, dims))

    def operators(self, top: yamlio.LineDict) -> None:
        ops_node = top["operators"]
        if not isinstance(ops_node, yamlio.LineList):
            raise err("operators must be a list", top.where("operators"))
        if not ops_node:
            raise err("the model has no operators", top.where("operators"),
                       hint="list at least one operator")
        for i, onode in enumerate(ops_node):
            self.operator(i, mapping(onode, f"operator {i}", ops_node.where(i)),
                          ops_node.where(i))

    def operator(self, i: int, onode: yamlio.LineDict, w: Where) -> None:
        keys(onode, OP_KEYS, f"operator {i}")
        for key in ("name", "op", "inputs", "outputs"):
            if key not in onode:
                raise err(f"operator {i} needs '{key}'", w)
        oname, ocname = self.operator_name(onode)
        opname = onode["op"]
        if not name_in(opname, OPS):
            raise err(f"operator {shown(oname)}: unknown op {shown(opname)}", onode.where("op"),
                       hint="known ops: " + ", ".join(OPS))
        opdef = OPS[opname]
        ins, outs = onode["inputs"], onode["outputs"]
        if not isinstance(ins, list) or not isinstance(outs, list):
            raise err(f"operator {shown(oname)}: inputs and outputs must be lists", w)
        if not opdef.takes(len(ins)):
            raise err(f"operator {shown(oname)}: {opname} takes "
                      f"{opdef.required_inputs}" + (" or more" if opdef.variadic else
                      f" to {len(opdef.inputs)}" if len(opdef.inputs) !=
                      opdef.required_inputs else "") +
                      f" inputs ({', '.join(opdef.inputs)}), got {len(ins)}",
                      onode.where("inputs"))
        if len(outs) != len(opdef.outputs):
            raise err(f"operator {shown(oname)}: {opname} has {len(opdef.outputs)} output, "
                       f"got {len(outs)}", onode.where("outputs"))
        in_names, shapes = self.operator_inputs(oname, opdef.arg_names(len(ins)),
                                                opdef.optional, ins, onode, w)
        attrs_node = mapping(optional(onode, "attrs", {}), f"attrs of {shown(oname)}",
                             onode.where("attrs"))
        attr_numbers(attrs_node, [k for k, a in opdef.attrs.items() if a.kind == "float"],
                     f"operator {shown(oname)}")
        try:
            attrs = resolved_attrs(opdef, shapes, dict(attrs_node))
            out_shape = opdef.infer(shapes, attrs)
            problem = params_problem(self.params(opname, in_names, outs, shapes, out_shape,
                                                 attrs))
        except ShapeError as exc:
            problem = str(exc)
        if problem is not None:
            raise err(f"operator {shown(oname)} ({opname}): {problem}", w)
        out_names = self.operator_outputs(oname, opname, outs, out_shape, onode, w)
        device = onode.get("device")
        if device is not None and not name_in(device, {d.name for d in self.device_list}):
            raise err(f"operator {shown(oname)} runs on unknown device {shown(device)}",
                       onode.where("device"),
                       hint="declared devices: " + (", ".join(d.name for d in self.device_list)
                                                   or "none"))
        self.ops.append(Operator(i, oname, opname, tuple(in_names), tuple(out_names),
                                 tuple(sorted(attrs.items())), device, ocname, w))

    def params(self, opname: str, ins: list[str | None], outs: list[Any],
               shapes: list[Shape | None], out_shape: Shape, attrs: dict[str, Any]
               ) -> dict[str, Any]:
        """An operator's params (its int8 form's on int8 tensors), checked as generation
        will derive them."""
        its = [self.tensors.get(t) if t is not None else None for t in ins]
        out = outs[0] if outs and isinstance(outs[0], str) else ""
        known = self.tensors.get(out)
        odt, oq = (known.dtype, known.quant) if known is not None else \
            self.declared.get(out, ("float32", None))[:2]
        return op_params(opname, shapes, out_shape, attrs,
                         [t.dtype if t else None for t in its] + [odt],
                         [t.quant if t else None for t in its] + [oq])[1]

    def operator_name(self, onode: yamlio.LineDict) -> tuple[str, str]:
        """An operator's name, checked unique, and its C spelling."""
        oname = onode["name"]
        if not isinstance(oname, str) or not oname:
            raise err(f"operator name must be a non-empty string, not {shown(oname)}",
                      onode.where("name"))
        if oname in self.op_names:
            raise err(f"duplicate name {shown(oname)}", onode.where("name"),
                       hint="names must be unique")
        self.op_names.add(oname)
        return oname, self.namer.operator(oname)

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
                raise err(f"operator {shown(oname)}: input {j} must be a tensor name", w)
            known = self.tensors.get(t)
            if known is not None and known.role in ("input", "constant"):
                shapes.append(known.shape)
            elif t in self.written:
                shapes.append(self.inferred[t])
            elif known is not None and known.role == "output":
                raise err(f"operator {shown(oname)} reads output {shown(t)} before any operator "
                           "writes it", onode.where("inputs"))
            else:
                raise err(f"operator {shown(oname)} reads {shown(t)}, which no earlier operator "
                           "writes and which is not an input or constant",
                           onode.where("inputs"), hint="operators run in the order listed")
            in_names.append(t)
        return in_names, shapes

    def operator_outputs(self, oname: str, opname: str, outs: list[Any], out_shape: Shape,
                         onode: yamlio.LineDict, w: Where) -> list[str]:
        out_names: list[str] = []
        for t in outs:
            if not isinstance(t, str) or not t:
                raise err(f"operator {shown(oname)}: outputs must be tensor names", w)
            if t in self.written:
                raise err(f"tensor {shown(t)} has two writers: '{self.written[t]}' and "
                           f"{shown(oname)}", onode.where("outputs"),
                           hint="each tensor is written once")
            declared = self.tensors.get(t)
            if declared is not None and declared.role in ("input", "constant"):
                raise err(f"operator {shown(oname)} writes {shown(t)}, which is a model "
                           f"{declared.role}", onode.where("outputs"))
            if declared is not None:  # a model output: the declared shape must match
                if declared.shape != out_shape:
                    raise err(f"output {shown(t)} is declared {list(declared.shape)} but "
                               f"{shown(oname)} ({opname}) produces {list(out_shape)}",
                               onode.where("outputs"), hint="fix the declared shape")
            else:
                check_elements(out_shape, f"tensor {shown(t)} written by {shown(oname)}",
                               onode.where("outputs"))
                dt, q, dims, dwhere = self.declared.get(t, ("float32", None, None, w))
                if dims is not None and dims != out_shape:
                    raise err(f"tensor {shown(t)} is declared {list(dims)} but {shown(oname)} "
                              f"({opname}) produces {list(out_shape)}", dwhere)
                self.tensors[t] = Tensor(t, out_shape, dt, "intermediate",
                                         self.tensor_cname(t, "intermediate", w),
                                         onode.where("outputs"), q)
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
                raise err(f"constant {shown(name)}: a 4-bit constant must be the B of gemm "
                           "operators only", qwhere)
            trans = {op.attr_dict["transB"] for op, _ in uses}
            if len(trans) != 1:
                raise err(f"constant {shown(name)}: used with and without transB", qwhere)
            weights = self.consts[name]
            w_nk = weights if trans.pop() else weights.T  # N x K
            if w_nk.shape[1] % block:
                raise err(f"constant {shown(name)}: K = {w_nk.shape[1]} is not a multiple of "
                           f"the block ({block})", qwhere)
            q = quantize(w_nk, block)
            with np.errstate(over="ignore"):
                deq = q.dequantize()
            if not np.all(np.isfinite(deq)):
                raise err(f"constant {shown(name)}: its 4-bit blocks' scales (bfloat16) make "
                           "values beyond float32", qwhere, hint="scale the weights down")
            self.consts[name] = deq if w_nk is weights else np.ascontiguousarray(deq.T)
            self.consts[name].setflags(write=False)
            quantized[name] = q
            self.tensors[name] = replace(self.tensors[name], dtype="q4c32")
        return quantized

    def tensor_cname(self, name: Any, role: str, where: Where, quantized: bool = False
                     ) -> str:
        """The C spelling of a new tensor (a name used twice is refused)."""
        if not isinstance(name, str) or not name:
            raise err(f"{role} name must be a non-empty string, not {shown(name)}", where)
        if name in self.tensors:
            raise err(f"duplicate name {shown(name)}", where, hint="names must be unique")
        return self.namer.tensor(name, role, quantized)
