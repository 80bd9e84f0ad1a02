"""A model written back as a description: the YAML :mod:`.model` reads, and each
constant as a .npy file beside it (``<name>.npy``). Loading what this writes gives an
equal model (its names, shapes, dtypes, quantization, attributes as given, devices and
constant values). ``tvmdev import`` writes an imported model this way.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import yaml

from ..model.graph import Model, Operator, Tensor
from ..model.quant import Quant
from ..naming import c_spelling


def description(model: Model) -> dict[str, Any]:
    """The model as the plain data of its description."""
    ts = model.tensors
    doc: dict[str, Any] = {
        "name": model.name,
        "devices": {d.name: {"kind": d.kind} for d in model.devices},
        "inputs": {t: _io(ts[t]) for t in model.inputs},
        "outputs": {t: _io(ts[t]) for t in model.outputs},
        **({"states": {t: _io(ts[t]) for t in model.states}} if model.states else {}),
        "constants": {n: _constant(ts[n], model) for n in model.constants},
    }
    # Intermediates that are not float32 (their dtype and quant; the shape is inferred),
    # or whose C spelling is not their name's.
    tensors = {t: {**({"dtype": ts[t].dtype} if ts[t].dtype != "float32" else {}),
                   **_quant(ts[t].quant), **_c_name(ts[t].name, ts[t].cname)}
               for op in model.operators for t in op.outputs
               if ts[t].role == "intermediate"
               and (ts[t].dtype != "float32" or _c_name(ts[t].name, ts[t].cname))}
    if tensors:
        doc["tensors"] = tensors
    doc["operators"] = [_operator(op) for op in model.operators]
    return doc


def yaml_text(model: Model, comment: str) -> str:
    """The description as YAML, after ``comment`` (one line)."""
    return f"# {comment}\n" + yaml.safe_dump(description(model), sort_keys=False,
                                             default_flow_style=None, width=100)


def npy_files(model: Model) -> dict[str, bytes]:
    """Each constant as the bytes of a .npy file, by file name (a 4-bit one as the values
    it stands for, which quantise back to the same blocks)."""
    out = {}
    for name, array in model.constants.items():
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
        out[f"{name}.npy"] = buf.getvalue()
    return out


def _quant(q: Quant | None) -> dict[str, Any]:
    if q is None:
        return {}
    return {"quant": {"scale": [float(s) for s in q.scale],
                      "zero_point": [int(z) for z in q.zero_point],
                      **({"axis": q.axis} if q.per_channel or q.axis else {})}}


def _c_name(name: str, cname: str) -> dict[str, Any]:
    """``c_name:``, where the C spelling is not the one the name gives."""
    return {"c_name": cname} if cname != c_spelling(name) else {}


def _io(t: Tensor) -> dict[str, Any]:
    return {"shape": [int(d) for d in t.shape], "dtype": t.dtype, **_quant(t.quant),
            **_c_name(t.name, t.cname)}


def _constant(t: Tensor, model: Model) -> dict[str, Any]:
    q4 = model.quantized.get(t.name)
    return {"shape": [int(d) for d in t.shape],
            "dtype": "float32" if q4 is not None else t.dtype, "npy": f"{t.name}.npy",
            **_quant(t.quant), **_c_name(t.name, t.cname),
            **({"quantize": {"bits": 4, "block": q4.block}} if q4 is not None else {})}


def _operator(op: Operator) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": op.name, "op": op.op,
                             "inputs": ["" if t is None else t for t in op.inputs],
                             "outputs": list(op.outputs)}
    if op.given:
        entry["attrs"] = {k: _thawed(v) for k, v in op.given}
    if op.device is not None:
        entry["device"] = op.device
    entry.update(_c_name(op.name, op.cname))
    return entry


def _thawed(value: Any) -> Any:
    """An attribute's value as YAML writes it (tuples as lists)."""
    return [_thawed(v) for v in value] if isinstance(value, tuple) else value
