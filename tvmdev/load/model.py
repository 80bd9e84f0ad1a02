"""The model description: loaded from YAML (or JSON) into frozen dataclasses.

This module reads the description's structure (mappings, known keys, required keys,
lists) and hands each item, with the lines of its fields, to :class:`.assembly.Assembly`,
which checks it as a model (names, limits, dtypes and quantization, shapes inferred in
operator order and checked against the declared outputs). Every error names the file,
the line and the item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import Where, shown
from ..model.graph import Model
from . import yamlio
from .assembly import Assembly
from .constants import TENSOR_KEYS, constant_source, quantize_spec
from .fields import err, keys, mapping, optional
from .quantization import quant_fields

MODEL_KEYS = ("name", "devices", "inputs", "outputs", "states", "constants", "tensors",
              "operators")
# An intermediate tensor's declaration (``tensors:``): its dtype and quantization; its
# shape is inferred (and checked when given).
INTERMEDIATE_KEYS = ("shape", "dtype", "quant", "c_name")
OP_KEYS = ("name", "op", "inputs", "outputs", "attrs", "device", "c_name")


def load_model(path: Path) -> Model:
    """Load and check a model description."""
    path = Path(path)
    return model_from_doc(yamlio.load(path), path)


def model_from_doc(doc: Any, path: Path) -> Model:
    """Check a model description already parsed (``yamlio.load``); .npy files are
    relative to ``path``'s folder."""
    file = str(path)
    if doc is None:
        raise err("the model is empty", Where(file, 1),
                  hint="a model needs name, inputs, outputs and operators")
    top = mapping(doc, "a model", Where(file, 1))
    keys(top, MODEL_KEYS, "the model")
    for key in ("name", "outputs", "operators"):
        if key not in top:
            raise err(f"the model needs '{key}'", top.where(), hint="see the README")
    asm = Assembly(top["name"], path, top)
    _devices(asm, top)
    cast = _cast_outputs(top)
    if top.get("inputs") is not None:  # none: a model of constants only (ONNX's Constant)
        _io_tensors(asm, top, "inputs", "input", empty=True)
    _io_tensors(asm, top, "outputs", "output", cast)
    if "states" in top:  # persistent state: an LSTM's or SVDF's, kept across runs
        _io_tensors(asm, top, "states", "state", cast)
    _constants(asm, mapping(optional(top, "constants", {}), "constants",
                            top.where("constants")), path.parent)
    _intermediates(asm, mapping(optional(top, "tensors", {}), "tensors", top.where("tensors")),
                   cast)
    _operators(asm, top)
    return asm.finish()


def _devices(asm: Assembly, top: yamlio.LineDict) -> None:
    where = top.where("devices")
    node = mapping(optional(top, "devices", {}), "devices", where)
    asm.device_count(len(node), where)
    for dname, dnode in node.items():
        w = node.where(dname)
        dnode = mapping(dnode, f"device {shown(dname)}", w)
        keys(dnode, ("kind",), f"device {shown(dname)}")
        if "kind" not in dnode:
            raise err(f"device {shown(dname)} needs a kind", w,
                      hint="for example: {kind: woofles}")
        asm.device(dname, dnode["kind"], w, dnode.where("kind"))


def _cast_outputs(top: yamlio.LineDict) -> frozenset[str]:
    """The tensors a ``cast`` writes: raw integers, an int8 one without quantization (as
    the TFLite importer writes them). Malformed operators are left to _operators."""
    ops = top.get("operators")
    if not isinstance(ops, list):
        return frozenset()
    return frozenset(t for o in ops if isinstance(o, dict) and o.get("op") == "cast"
                     and isinstance(o.get("outputs"), list)
                     for t in o["outputs"] if isinstance(t, str))


def _io_tensors(asm: Assembly, top: yamlio.LineDict, key: str, role: str,
                cast: frozenset[str] = frozenset(), empty: bool = False) -> None:
    node = mapping(top[key], key, top.where(key))
    if not empty:
        asm.nonempty(key, len(node), top.where(key))
    for tname, tnode in node.items():
        w = node.where(tname)
        what = f"{role} {shown(tname)}"
        tnode = mapping(tnode, what, w)
        keys(tnode, TENSOR_KEYS, what)
        if "shape" not in tnode or "dtype" not in tnode:
            raise err(f"{what} needs shape and dtype", w)
        asm.tensor(tname, role, tnode["shape"], tnode["dtype"], quant_fields(tnode, what), w,
                   tnode, tnode.get("c_name"), raw=tname in cast)


def _constants(asm: Assembly, node: yamlio.LineDict, base: Path) -> None:
    for name, cnode in node.items():
        w = node.where(name)
        what = f"constant {shown(name)}"
        quantize = quantize_spec(name, cnode) if isinstance(cnode, yamlio.LineDict) and \
            "quantize" in cnode else None
        cnode = mapping(cnode, what, w)
        source = constant_source(name, cnode, base)
        asm.constant(name, cnode["shape"], cnode["dtype"], source, quant_fields(cnode, what),
                     w, cnode, quantize, cnode.get("c_name"))


def _intermediates(asm: Assembly, node: yamlio.LineDict, cast: frozenset[str]) -> None:
    """``tensors:``: the dtype (default float32) and quant of intermediate tensors."""
    for tname, tnode in node.items():
        w = node.where(tname)
        what = f"tensor {shown(tname)}"
        tnode = mapping(tnode, what, w)
        keys(tnode, INTERMEDIATE_KEYS, what)
        asm.intermediate(tname, optional(tnode, "shape", None), tnode.get("dtype", "float32"),
                         quant_fields(tnode, what), w, tnode, tnode.get("c_name"),
                         raw=tname in cast)


def _operators(asm: Assembly, top: yamlio.LineDict) -> None:
    ops_node = top["operators"]
    if not isinstance(ops_node, yamlio.LineList):
        raise err("operators must be a list", top.where("operators"))
    asm.nonempty("operators", len(ops_node), top.where("operators"))
    for i, onode in enumerate(ops_node):
        w = ops_node.where(i)
        onode = mapping(onode, f"operator {i}", w)
        keys(onode, OP_KEYS, f"operator {i}")
        for key in ("name", "op", "inputs", "outputs"):
            if key not in onode:
                raise err(f"operator {i} needs '{key}'", w)
        oname, ins, outs = onode["name"], onode["inputs"], onode["outputs"]
        if not isinstance(ins, list) or not isinstance(outs, list):
            raise err(f"operator {shown(oname)}: inputs and outputs must be lists", w)
        attrs = mapping(optional(onode, "attrs", {}), f"attrs of {shown(oname)}",
                        onode.where("attrs"))
        asm.operator(oname, onode["op"], ins, outs, attrs, onode.get("device"), w, onode,
                     attrs if isinstance(attrs, yamlio.LineDict) else onode,
                     c_name=onode.get("c_name"))

