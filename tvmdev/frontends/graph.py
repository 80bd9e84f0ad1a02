"""What a front end builds: a model description in tvmdev's own terms, operator by
operator, with its constants in memory.

Converters (one per source operator kind) call :class:`Builder`; each operator's output
shape is inferred with tvmdev's own op semantics as it is added, so a converter can look
at the shapes of what came before. The result, :class:`Imported`, is the same document
the YAML loader reads (plain data) plus the constants' arrays: ``to_model`` checks it
with the YAML loader's checks, ``files`` writes it as YAML and .npy files.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .. import naming
from ..errors import TvmdevError
from ..load import yamlio
from ..load.model import model_from_doc
from ..model.graph import Model
from ..model.ops import OPS, resolved_attrs
from ..model.quant import Quant
from ..model.shapes import Shape, ShapeError

MAX_NAME = 64  # C names made from source names are cut to this length


class Unsupported(Exception):
    """A converter cannot map this operator (yet): ``detail`` says what of it."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail


def c_names(names: Sequence[str]) -> list[str]:
    """Source names as C identifiers (``naming.c_spelling``: ``serving_default_x:0`` ->
    ``serving_default_x_0``), made unique case-insensitively with ``_2``, ``_3``..."""
    taken: set[str] = set()
    out = []
    for name in names:
        base = c = naming.c_spelling(name)
        n = 2
        while c.upper() in taken or naming.reserved(c):
            c, n = f"{base}_{n}", n + 1
        taken.add(c.upper())
        out.append(c)
    return out


@dataclass
class Imported:
    """A model made by a front end: the YAML document and its constants."""

    doc: dict[str, Any]
    arrays: dict[str, np.ndarray]  # by .npy file name
    source: Path
    source_kinds: list[str] = field(default_factory=list)  # of each operator, lower case
    summary: dict[str, int] = field(default_factory=dict)  # source operators by kind
    notes: list[str] = field(default_factory=list)  # what the user should know, not errors

    @property
    def name(self) -> str:
        """The model's name."""
        return str(self.doc["name"])

    def to_model(self) -> Model:
        """The model, checked as a YAML model is (imported in memory)."""
        return model_from_doc(yamlio.wrap(self.doc, str(self.source)), self.source,
                              self.arrays)

    def yaml_text(self) -> str:
        """The description as YAML (constants refer to .npy files beside it)."""
        return (f"# Imported by tvmdev from {self.source.name}; constants are the .npy "
                "files beside it.\n"
                + yaml.safe_dump(self.doc, sort_keys=False, default_flow_style=None,
                                 width=100))

    def npy_bytes(self) -> dict[str, bytes]:
        """Each constant as the bytes of a .npy file, by file name."""
        out = {}
        for fname, array in self.arrays.items():
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
            out[fname] = buf.getvalue()
        return out

    def place(self, devices: Sequence[str], places: Sequence[str]) -> list[str]:
        """Declare ``ID:KIND`` devices and put every operator of ``OPS=ID``'s kinds (tvmdev
        ops or source kinds, lower case: gemm, fully_connected) on that instance.

        One ``--place`` serves many models (conv2d,depthwise_conv2d,fully_connected=npu0),
        so a tvmdev op the model does not use is a note, returned; a kind that is neither
        a tvmdev op nor in the model (a typo) is an error, as is a list matching nothing."""
        decl: dict[str, dict[str, str]] = {}
        for spec in devices:
            dev, _, kind = spec.partition(":")
            if not dev or not kind:
                raise TvmdevError(f"--device {spec}: expected ID:KIND",
                                  hint="for example --device npu0:woofles")
            decl[dev] = {"kind": kind}
        self.doc["devices"] = decl
        notes = []
        for spec in places:
            kinds, _, dev = spec.partition("=")
            if dev not in decl:
                raise TvmdevError(f"--place {spec}: no device '{dev}'",
                                  hint="declare it with --device " + (dev or "ID") + ":KIND")
            wanted = {k for k in kinds.split(",") if k}
            hit = set()
            for op, skind in zip(self.doc["operators"], self.source_kinds, strict=True):
                found = wanted & {op["op"], skind}
                if found:
                    op["device"] = dev
                    hit |= found
            unknown = {k for k in wanted - hit if k not in OPS}
            if unknown or not hit:
                raise TvmdevError(f"--place {spec}: no operator of kind "
                                  f"{', '.join(sorted(unknown or wanted))} in the model",
                                  hint="kinds: " + ", ".join(sorted(self.kinds())))
            notes += [f"--place {spec}: the model has no {k} operator"
                      for k in sorted(wanted - hit)]
        return notes

    def kinds(self) -> set[str]:
        """The tvmdev ops and the source kinds (lower case) of the operators."""
        return {op["op"] for op in self.doc["operators"]} | set(self.source_kinds)


class Builder:
    """The model being built: tensors by C name with their shapes, dtypes and quantisation,
    constants, operators; and the source operators no converter could map, by kind."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.shapes: dict[str, Shape] = {}
        self.dtypes: dict[str, str] = {}
        self.quant: dict[str, Quant] = {}
        self.taken: set[str] = set()
        self.inputs: dict[str, Any] = {}
        self.constants: dict[str, Any] = {}
        self.arrays: dict[str, np.ndarray] = {}
        self.operators: list[dict[str, Any]] = []
        self.source_kinds: list[str] = []
        self.unsupported: dict[str, list[str]] = {}  # kind -> the operators' names
        self.notes: list[str] = []
        self.summary: dict[str, int] = {}
        # The hint of an operator whose operands and attributes do not fit ({kind}).
        self.kind_hint: str | None = None

    def reserve(self, name: str) -> str:
        """Claim a C name (already unique among source names)."""
        self.taken.add(name.upper())
        return name

    def fresh(self, hint: str) -> str:
        """A new tensor name, not taken, made from ``hint``."""
        base, n = hint[:MAX_NAME], 1
        name = base
        while name.upper() in self.taken:
            n += 1
            name = f"{base}_{n}"
        return self.reserve(name)

    def tensor(self, name: str, shape: Shape, dtype: str = "float32",
               quant: Quant | None = None) -> None:
        """Record a tensor's shape, dtype and quantisation."""
        self.shapes[name] = shape
        self.dtypes[name] = dtype
        if quant is not None:
            self.quant[name] = quant

    def add_input(self, name: str, shape: Shape, dtype: str = "float32",
                  quant: Quant | None = None) -> None:
        """A model input."""
        self.inputs[name] = {"shape": list(shape), "dtype": dtype, **self.quant_doc(quant)}
        self.tensor(name, shape, dtype, quant)

    @staticmethod
    def quant_doc(quant: Quant | None) -> dict[str, Any]:
        """A tensor's quantization as its YAML ``quant`` key (none without)."""
        if quant is None:
            return {}
        return {"quant": {"scale": [float(s) for s in quant.scale],
                          "zero_point": [int(z) for z in quant.zero_point],
                          **({"axis": int(quant.axis)} if len(quant.scale) > 1 else {})}}

    def constant(self, name: str, array: np.ndarray, dtype: str = "float32",
                 quant: Quant | None = None) -> str:
        """A constant called ``name`` (reused when added again)."""
        if name not in self.constants:
            data = np.ascontiguousarray(array, dtype=np.dtype(dtype))
            self.constants[name] = {"shape": list(data.shape), "dtype": dtype,
                                    "npy": f"{name}.npy", **self.quant_doc(quant)}
            self.arrays[f"{name}.npy"] = data
            self.tensor(name, tuple(data.shape), dtype, quant)
        return name

    def emit(self, kind: str, op: str, inputs: Sequence[str | None], output: str,
             attrs: dict[str, Any] | None = None, dtype: str = "float32",
             quant: Quant | None = None) -> Shape:
        """Add one tvmdev operator writing ``output`` (of ``dtype``); its inferred output
        shape."""
        opdef = OPS[op]
        shapes = [self.shapes[t] if t is not None else None for t in inputs]
        try:
            shape = opdef.infer(shapes, resolved_attrs(opdef, shapes, dict(attrs or {})))
        except ShapeError as exc:
            raise TvmdevError(f"{kind} writing '{output}': {exc}", str(self.source),
                              hint=self.kind_hint and self.kind_hint.format(kind=kind)
                              ) from None
        # Operators are named after the tensor they write (their own namespace).
        entry: dict[str, Any] = {"name": output, "op": op,
                                 "inputs": ["" if t is None else t for t in inputs],
                                 "outputs": [output]}
        if attrs:
            entry["attrs"] = dict(attrs)
        self.operators.append(entry)
        self.source_kinds.append(kind.lower())
        self.tensor(output, shape, dtype, quant)
        return shape

    def refuse(self, kind: str, detail: str, name: str) -> None:
        """Record a source operator that no converter maps."""
        key = f"{kind} ({detail})" if detail else kind
        self.unsupported.setdefault(key, []).append(name)

    def finish(self, name: str, outputs: Sequence[str], hint: str) -> Imported:
        """The imported model; raises listing every unsupported operator kind."""
        if self.unsupported:
            total = sum(len(v) for v in self.unsupported.values())
            kinds = "; ".join(f"{k} x{len(v)} (first: {v[0]})"
                              for k, v in self.unsupported.items())
            raise TvmdevError(f"{total} unsupported operator{'s' if total != 1 else ''}: "
                              f"{kinds}", str(self.source), hint=hint)
        for o in outputs:
            if o not in self.shapes:
                raise TvmdevError(f"output '{o}' is not an input and no operator writes "
                                  "it", str(self.source))
        written = [op["outputs"][0] for op in self.operators]
        # Intermediates that are not float32: their dtype and quant (the shape is inferred).
        tensors = {t: {"dtype": self.dtypes[t], **self.quant_doc(self.quant.get(t))}
                   for t in written if t not in outputs
                   and self.dtypes.get(t, "float32") != "float32"}
        doc: dict[str, Any] = {"name": name, "devices": {}, "inputs": self.inputs,
                               "outputs": {o: {"shape": list(self.shapes[o]),
                                               "dtype": self.dtypes.get(o, "float32"),
                                               **self.quant_doc(self.quant.get(o))}
                                           for o in outputs},
                               "constants": self.constants,
                               **({"tensors": tensors} if tensors else {}),
                               "operators": self.operators}
        return Imported(doc, self.arrays, self.source, self.source_kinds, dict(self.summary),
                        list(self.notes))
