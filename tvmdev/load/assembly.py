"""A model put together item by item, each item checked against those before it: every
check of a model that is about the model, not about how a description spells it.

Two callers hand items over in the same order (devices, inputs, outputs, constants,
declared intermediates, operators): the YAML loader (:mod:`.model`), once it has read an
item's fields, and the front ends (:mod:`tvmdev.frontends.graph`), with what they built.
The checks: the model's and devices' names are C identifiers and every name gets a C
spelling that clashes with nothing (:class:`~tvmdev.model.cnames.Namer`); shapes, dtypes,
constants' values and quantization are within tvmdev's limits; an operator has its op's
arity and attributes, reads tensors written before it, and has its output shape inferred
(once: a front end has inferred it already) and its params computable as generation
computes them; devices are declared, at most MAX_DEVICES. An error points at its item:
a YAML node's line (:class:`~.fields.Places`), or an imported model's file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from ..model.ops import OPS, OpDef, op_params, resolved_attrs
from ..model.quant import Q4Weight, Quant, quantize
from ..model.shapes import Shape, ShapeError
from ..reading import as_float32
from .fields import (
    MAX_CONSTANT_ELEMENTS,
    Places,
    attr_numbers,
    check_elements,
    dtype,
    err,
    name_in,
    shape,
)
from .platform import all_platforms
from .quantization import INT_RANGE, RAW_RANGE, QuantFields, checked_quant, int_constant

# A constant's values: given its checked shape and dtype, the data and where it is from.
Source = Callable[[Shape, str], tuple[np.ndarray, Where]]
# An operator's attributes (checked, completed and resolved) and its output shape.
Inferred = tuple[dict[str, Any], Shape]


def infer(opdef: OpDef, shapes: list[Shape | None], attrs: Mapping[str, Any]) -> Inferred:
    """An operator's resolved attributes and output shape, from its input shapes and
    attributes as given; raises ShapeError."""
    resolved = resolved_attrs(opdef, shapes, dict(attrs))
    return resolved, opdef.infer(shapes, resolved)


def _frozen(value: Any) -> Any:
    """An attribute's value as an immutable one (lists as tuples)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


class Assembly:
    """A model being put together; :meth:`finish` returns it."""

    def __init__(self, name: Any, path: Path, at: Places) -> None:
        naming.check_identifier(name, "model name", at.where("name"))
        self.name, self.path = str(name), path
        self.namer = Namer(self.name, all_platforms())  # the C spellings of every name
        self.devices: list[Device] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.states: list[str] = []
        self.tensors: dict[str, Tensor] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.to_quantize: dict[str, tuple[int, Where]] = {}
        self.ops: list[Operator] = []
        self.written: dict[str, str] = {}  # tensor -> the operator that writes it
        self.state_users: dict[str, str] = {}  # state -> the operator that keeps it
        self.op_names: set[str] = set()
        # C spellings given for names (c_name:, or an importer's): tensor or operator name
        # -> the spelling its C names start from (still made unique)
        self.spellings: dict[tuple[str, str], str] = {}
        # declared intermediates: name -> (dtype, quant, shape or None, where)
        self.declared: dict[str, tuple[str, Quant | None, Shape | None, Where]] = {}

    def nonempty(self, section: str, count: int, where: Where) -> None:
        """A model has inputs, outputs and operators."""
        if not count:
            raise err(f"the model has no {section}", where,
                      hint="list at least one operator" if section == "operators" else None)

    def device_count(self, count: int, where: Where) -> None:
        """A model has at most MAX_DEVICES device instances."""
        if count > MAX_DEVICES:
            raise err(f"the model declares {count} devices; at most {MAX_DEVICES} are "
                      "supported", where)

    def device(self, name: Any, kind: Any, where: Where, kind_where: Where) -> None:
        """A device instance of ``kind``."""
        naming.check_identifier(name, "device instance", where)
        self.namer.device(name, where)
        ckind = device_name(kind, kind_where)
        self.namer.kind(ckind, kind_where)
        self.devices.append(Device(name, ckind, where))

    def tensor(self, name: Any, role: str, dims: Any, dt: Any, quant: QuantFields | None,
               where: Where, at: Places, c_name: Any = None, raw: bool = False) -> None:
        """A model input, output or state (``role``); ``c_name``: the C spelling asked for
        it; ``raw``: raw integers, int8 ones unquantized (a front end's CAST writes them)."""
        self.spell("tensor", name, c_name, at)
        cname = self._cname(name, role, where)
        what = f"{role} {shown(name)}"
        s = shape(dims, what, where)
        d = dtype(dt, what, at.where("dtype"))
        self.tensors[name] = Tensor(name, s, d, role, cname, where,
                                    checked_quant(quant, what, d, s, at.where(), raw))
        {"input": self.inputs, "output": self.outputs, "state": self.states}[role].append(name)

    def constant(self, name: Any, dims: Any, dt: Any, source: Source,
                 quant: QuantFields | None, where: Where, at: Places,
                 quantize: tuple[int, Where] | None = None, c_name: Any = None) -> None:
        """A constant, its values read from ``source`` once its shape and dtype are
        checked; ``quantize``: the block size of a 4-bit one, and where it is asked."""
        self.spell("tensor", name, c_name, at)
        c = self._cname(name, "constant", where, quantize is not None)
        what = f"constant {shown(name)}"
        s = shape(dims, what, at.where("shape"), MAX_CONSTANT_ELEMENTS)
        d = dtype(dt, what, at.where("dtype"))
        data, swhere = source(s, d)
        if d in INT_RANGE or d in RAW_RANGE:
            data = int_constant(what, data, d, swhere)
        else:
            data = as_float32(data, what, swhere, finite=True)
        data.setflags(write=False)
        self.consts[name] = data
        if quantize is not None:
            self.to_quantize[name] = quantize
        self.tensors[name] = Tensor(name, s, d, "constant", c, where,
                                    checked_quant(quant, what, d, s, at.where()))

    def intermediate(self, name: Any, dims: Any, dt: Any, quant: QuantFields | None,
                     where: Where, at: Places, c_name: Any = None, raw: bool = False
                     ) -> None:
        """The dtype and quantization of an intermediate tensor (``dims``: its shape, which
        is checked against the inferred one, or None; ``raw`` as :meth:`tensor`)."""
        what = f"tensor {shown(name)}"
        if not isinstance(name, str) or not name:
            raise err(f"tensor name must be a non-empty string, not {shown(name)}", where)
        if name in self.tensors:
            raise err(f"{what} is a model {self.tensors[name].role}: declare it there",
                      where, hint="tensors: declares intermediates only")
        s = shape(dims, what, at.where("shape")) if dims is not None else None
        d = dtype(dt, what, at.where("dtype"))
        self.spell("tensor", name, c_name, at)
        self.declared[name] = (d, checked_quant(quant, what, d, s, at.where(), raw), s, where)

    def operator(self, name: Any, op: Any, inputs: list[Any], outputs: list[Any],
                 attrs: Mapping[str, Any], device: Any, where: Where, at: Places,
                 attrs_at: Places, inferred: Inferred | None = None, c_name: Any = None
                 ) -> None:
        """An operator (the next to run), its attributes as given; ``inferred``: its
        attributes resolved and output shape, when the caller has inferred them."""
        if isinstance(name, str):
            self.spell("operator", name, c_name, at)
        oname, ocname = self._operator_name(name, at.where("name"))
        if not name_in(op, OPS):
            raise err(f"operator {shown(oname)}: unknown op {shown(op)}", at.where("op"),
                      hint="known ops: " + ", ".join(OPS))
        opdef = OPS[op]
        if not opdef.takes(len(inputs)):
            raise err(f"operator {shown(oname)}: {op} takes {opdef.required_inputs}"
                      + (" or more" if opdef.variadic else f" to {len(opdef.inputs)}"
                         if len(opdef.inputs) != opdef.required_inputs else "")
                      + f" inputs ({', '.join(opdef.inputs)}), got {len(inputs)}",
                      at.where("inputs"))
        if len(outputs) != len(opdef.outputs):
            raise err(f"operator {shown(oname)}: {op} has {len(opdef.outputs)} output, "
                      f"got {len(outputs)}", at.where("outputs"))
        in_names, shapes = self._inputs(oname, opdef.arg_names(len(inputs)), opdef.optional,
                                        inputs, where, at.where("inputs"))
        self._check_states(oname, opdef.arg_names(len(inputs)), opdef.states, in_names,
                           at.where("inputs"))
        attr_numbers(attrs, [k for k, a in opdef.attrs.items() if a.kind == "float"],
                     f"operator {shown(oname)}", attrs_at)
        try:
            resolved, out_shape = inferred or infer(opdef, shapes, attrs)
            problem = params_problem(self._params(op, in_names, outputs, shapes, out_shape,
                                                  resolved))
        except ShapeError as exc:
            problem = str(exc)
        if problem is not None:
            raise err(f"operator {shown(oname)} ({op}): {problem}", where)
        out_names = self._outputs(oname, op, outputs, out_shape, where, at.where("outputs"))
        if device is not None and not name_in(device, {d.name for d in self.devices}):
            raise err(f"operator {shown(oname)} runs on unknown device {shown(device)}",
                      at.where("device"), hint="declared devices: "
                      + (", ".join(d.name for d in self.devices) or "none"))
        self.ops.append(Operator(len(self.ops), oname, op, tuple(in_names), tuple(out_names),
                                 tuple(sorted(resolved.items())), device, ocname, where,
                                 tuple((k, _frozen(v)) for k, v in attrs.items())))

    def finish(self) -> Model:
        """The model: every declared intermediate and every output written, the 4-bit
        constants quantized."""
        for t, (_, _, _, where) in self.declared.items():
            if t not in self.written:
                raise err(f"tensor {shown(t)} is declared under tensors but no operator "
                          "writes it", where,
                          hint="tensors: declares the dtype and quant of intermediates")
        for t in self.outputs:
            if t not in self.written:
                raise err(f"output {shown(t)} is never written by an operator",
                          self.tensors[t].where)
        quantized = self._quantize()
        return Model(name=self.name, path=str(self.path), devices=tuple(self.devices),
                     inputs=tuple(self.inputs), outputs=tuple(self.outputs),
                     constants=self.consts, operators=tuple(self.ops), tensors=self.tensors,
                     quantized=quantized, states=tuple(self.states))

    def _params(self, opname: str, ins: list[str | None], outs: list[Any],
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

    def _operator_name(self, oname: Any, where: Where) -> tuple[str, str]:
        """An operator's name, checked unique, and its C spelling."""
        if not isinstance(oname, str) or not oname:
            raise err(f"operator name must be a non-empty string, not {shown(oname)}", where)
        if oname in self.op_names:
            raise err(f"duplicate name {shown(oname)}", where, hint="names must be unique")
        self.op_names.add(oname)
        return oname, self.namer.operator(self.spellings.get(("operator", oname), oname))

    def _inputs(self, oname: str, args: tuple[str, ...], optional: frozenset[str],
                ins: list[Any], w: Where, at_inputs: Where
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
            if known is not None and (known.role in ("input", "constant", "state")
                                      or t in self.written):
                shapes.append(known.shape)
            elif known is not None and known.role == "output":
                raise err(f"operator {shown(oname)} reads output {shown(t)} before any "
                          "operator writes it", at_inputs)
            else:
                raise err(f"operator {shown(oname)} reads {shown(t)}, which no earlier "
                          "operator writes and which is not an input or constant",
                          at_inputs, hint="operators run in the order listed")
            in_names.append(t)
        return in_names, shapes

    def _check_states(self, oname: str, args: tuple[str, ...], states: frozenset[str],
                      ins: list[str | None], where: Where) -> None:
        """A state tensor is the state argument of one operator, and a state argument
        is given a state tensor (its values are kept from one run to the next)."""
        for arg, t in zip(args, ins, strict=True):
            is_state = t is not None and self.tensors[t].role == "state"
            if arg in states and t is not None and not is_state:
                raise err(f"operator {shown(oname)}: {arg} must be a model state (states:), "
                          f"not {shown(t)}", where, hint="list it under states:")
            if is_state and arg not in states:
                raise err(f"operator {shown(oname)} reads state {shown(t)} as {arg}; a "
                          "state is only an operator's state argument", where)
            if is_state and t in self.state_users:
                raise err(f"state {shown(t)} is the state of '{self.state_users[t]}' "
                          f"and {shown(oname)}: each state has one operator", where)
            if is_state and t is not None:
                self.state_users[t] = oname

    def _outputs(self, oname: str, opname: str, outs: list[Any], out_shape: Shape,
                 w: Where, at_outputs: Where) -> list[str]:
        out_names: list[str] = []
        for t in outs:
            if not isinstance(t, str) or not t:
                raise err(f"operator {shown(oname)}: outputs must be tensor names", w)
            if t in self.written:
                raise err(f"tensor {shown(t)} has two writers: '{self.written[t]}' and "
                          f"{shown(oname)}", at_outputs, hint="each tensor is written once")
            declared = self.tensors.get(t)
            if declared is not None and declared.role in ("input", "constant", "state"):
                raise err(f"operator {shown(oname)} writes {shown(t)}, which is a model "
                          f"{declared.role}", at_outputs)
            if declared is not None:  # a model output: the declared shape must match
                if declared.shape != out_shape:
                    raise err(f"output {shown(t)} is declared {list(declared.shape)} but "
                              f"{shown(oname)} ({opname}) produces {list(out_shape)}",
                              at_outputs, hint="fix the declared shape")
            else:
                check_elements(out_shape, f"tensor {shown(t)} written by {shown(oname)}",
                               at_outputs)
                dt, q, dims, dwhere = self.declared.get(t, ("float32", None, None, w))
                if dims is not None and dims != out_shape:
                    raise err(f"tensor {shown(t)} is declared {list(dims)} but {shown(oname)} "
                              f"({opname}) produces {list(out_shape)}", dwhere)
                self.tensors[t] = Tensor(t, out_shape, dt, "intermediate",
                                         self._cname(t, "intermediate", w), at_outputs, q)
            self.written[t] = oname
            out_names.append(t)
        return out_names

    def _quantize(self) -> dict[str, Q4Weight]:
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

    def _cname(self, name: Any, role: str, where: Where, quantized: bool = False) -> str:
        """The C spelling of a new tensor (a name used twice is refused)."""
        if not isinstance(name, str) or not name:
            raise err(f"{role} name must be a non-empty string, not {shown(name)}", where)
        if name in self.tensors:
            raise err(f"duplicate name {shown(name)}", where, hint="names must be unique")
        return self.namer.tensor(self.spellings.get(("tensor", name), name), role, quantized)

    def spell(self, what: str, name: Any, c_name: Any, at: Places) -> None:
        """Record ``c_name`` (a C identifier, or None) as the C spelling of the tensor or
        operator (``what``) ``name``."""
        if c_name is None:
            return
        naming.check_identifier(c_name, f"c_name of {shown(name)}", at.where("c_name"))
        self.spellings[(what, str(name))] = c_name
