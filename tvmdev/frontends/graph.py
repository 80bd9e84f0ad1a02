"""What a front end builds: a model in tvmdev's own terms, operator by operator, with its
constants in memory.

Converters (one per source operator kind) call :class:`Builder`; each operator's output
shape is inferred with tvmdev's own op semantics as it is added (once), so a converter
can look at the shapes of what came before. The result, :class:`Imported`, can be put
on devices (:meth:`Imported.place`) and becomes a :class:`~tvmdev.model.graph.Model`
through the checks every model gets (:class:`~tvmdev.load.assembly.Assembly`), with no
description in between; ``tvmdev import`` writes that model's description
(:mod:`tvmdev.load.export`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import naming
from ..errors import TvmdevError, Where, shown
from ..load.assembly import Assembly, Inferred, Source, infer
from ..load.fields import InFile
from ..load.quantization import QuantFields
from ..model.graph import Model
from ..model.ops import OPS
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


def _values(data: np.ndarray, where: Where) -> Source:
    """A constant's values, in memory (as imported)."""
    return lambda dims, dt: (data, where)


@dataclass(frozen=True)
class BuiltOp:
    """A tvmdev operator a converter added, named after the tensor it writes: its
    attributes as given and as inferred (resolved, and the output shape), the source
    operator's kind, and the device placement put it on."""

    op: str
    inputs: tuple[str | None, ...]
    output: str
    attrs: dict[str, Any]
    inferred: Inferred
    kind: str
    device: str | None = None


class Builder:
    """The model being built: tensors by C name with their shapes, dtypes and quantisation,
    constants, operators; and the source operators no converter could map, by kind."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.shapes: dict[str, Shape] = {}
        self.dtypes: dict[str, str] = {}
        self.quant: dict[str, Quant] = {}
        self.taken: set[str] = set()
        self.inputs: list[str] = []
        self.states: list[str] = []  # persistent state (TFLite's variable tensors)
        self.constants: dict[str, np.ndarray] = {}
        self.operators: list[BuiltOp] = []
        self.unsupported: dict[str, list[str]] = {}  # kind -> the operators' names
        self.notes: list[str] = []
        self.summary: dict[str, int] = {}
        # The hint of an operator kind whose operands and attributes do not fit.
        self.kind_hint: Callable[[str], str] | None = None

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
        self.inputs.append(name)
        self.tensor(name, shape, dtype, quant)

    def add_state(self, name: str, shape: Shape, dtype: str = "float32",
                  quant: Quant | None = None) -> str:
        """A persistent state tensor (added once, on first use)."""
        if name not in self.states:
            self.states.append(name)
            self.tensor(name, shape, dtype, quant)
        return name

    def constant(self, name: str, array: np.ndarray, dtype: str = "float32",
                 quant: Quant | None = None) -> str:
        """A constant called ``name`` (reused when added again)."""
        if name not in self.constants:
            data = np.ascontiguousarray(array, dtype=np.dtype(dtype))
            self.constants[name] = data
            self.tensor(name, tuple(data.shape), dtype, quant)
        return name

    def emit(self, kind: str, op: str, inputs: Sequence[str | None], output: str,
             attrs: dict[str, Any] | None = None, dtype: str = "float32",
             quant: Quant | None = None) -> Shape:
        """Add one tvmdev operator writing ``output`` (of ``dtype``); its inferred output
        shape."""
        given = dict(attrs or {})
        inferred = self._infer(kind, op, inputs, output, given)
        self.operators.append(BuiltOp(op, tuple(inputs), output, given, inferred, kind))
        self.tensor(output, inferred[1], dtype, quant)
        return inferred[1]

    def rewrite(self, index: int, inputs: Sequence[str | None] | None = None,
                output: str | None = None, attrs: dict[str, Any] | None = None) -> None:
        """Change operator ``index`` when a later source operator folds into it (batch
        norm into its weights, a Relu into its activation); its output keeps its dtype
        and quantisation."""
        old = self.operators[index]
        ins = old.inputs if inputs is None else tuple(inputs)
        out = output or old.output
        given = old.attrs if attrs is None else attrs
        inferred = self._infer(old.kind, old.op, ins, out, given)
        self.operators[index] = replace(old, inputs=ins, output=out, attrs=given,
                                        inferred=inferred)
        self.tensor(out, inferred[1], self.dtypes[old.output], self.quant.get(old.output))

    def _infer(self, kind: str, op: str, inputs: Sequence[str | None], output: str,
               attrs: dict[str, Any]) -> Inferred:
        shapes = [self.shapes[t] if t is not None else None for t in inputs]
        try:
            return infer(OPS[op], shapes, attrs)
        except ShapeError as exc:
            raise TvmdevError(f"{kind} writing '{output}': {exc}", str(self.source),
                              hint=self.hint_for(kind)
                              ) from None

    def hint_for(self, kind: str) -> str | None:
        """The hint for an operator of ``kind`` whose operands or attributes do not fit
        (where its definition is), if the format gives one."""
        return self.kind_hint(kind) if self.kind_hint else None

    def check_steps(self, kind: str, output: str, attrs: dict[str, Any]) -> None:
        """Refuse a window that steps by less than one element (a stride or dilation
        < 1), before anything divides by it."""
        for key in ("strides", "dilations"):
            values = attrs.get(key)
            if values is not None and any(int(v) < 1 for v in values):
                raise TvmdevError(f"{kind} writing '{output}': {key} {shown(list(values))}"
                                  " must each be >= 1", str(self.source),
                                  hint="a window steps by one element or more: the model "
                                       "is corrupt or was edited by hand")

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
        return Imported(name, self, list(outputs))


# A constant's role in the C name it takes from its first reader (``conv2d_1_weights``):
# by (op, argument), else by argument; other arguments give their own lower-cased names.
ROLES: dict[str | tuple[str, str], str] = {
    "W": "weights", "filter": "weights", "weights": "weights", "bias": "bias",
    ("conv2d", "B"): "bias", ("gemm", "B"): "weights", ("gemm", "C"): "bias",
    ("matmul", "B"): "weights"}


@dataclass
class Imported:
    """A model a front end made (its builder's tensors, constants and operators) and the
    devices placement declared."""

    name: str
    built: Builder
    outputs: list[str]
    devices: dict[str, str] = field(default_factory=dict)  # instance -> kind

    @property
    def source(self) -> Path:
        """The file it was imported from."""
        return self.built.source

    @property
    def summary(self) -> dict[str, int]:
        """The source operators by kind."""
        return self.built.summary

    @property
    def notes(self) -> list[str]:
        """What the user should know (not errors)."""
        return self.built.notes

    @property
    def source_kinds(self) -> list[str]:
        """The source kind (lower case) of each operator."""
        return [op.kind.lower() for op in self.built.operators]

    def c_names(self) -> tuple[dict[str, str], dict[str, str]]:
        """The C spellings of the operators and of the tensors they make or read, from
        the operators (a converter's fused tensor names are long, and a TFLite bias is
        often named after the activation that follows): operators ``conv2d_1``,
        ``conv2d_2``... by op; their outputs ``conv2d_1_out``; a constant after the first
        operator that reads it and its role there (``conv2d_1_weights``, ``_bias``), a
        state after its operator and argument (``lstm_1_cell_state``). The
        model's inputs and outputs keep their names' spellings: they are the API."""
        ops: dict[str, str] = {}
        tensors: dict[str, str] = {}
        counts: dict[str, int] = {}
        api = set(self.built.inputs) | set(self.outputs)
        for op in self.built.operators:
            counts[op.op] = counts.get(op.op, 0) + 1
            ops[op.output] = cname = f"{op.op}_{counts[op.op]}"
            if op.output not in api:
                tensors[op.output] = f"{cname}_out"
            args = OPS[op.op].inputs
            for j, t in enumerate(op.inputs):
                arg = args[min(j, len(args) - 1)]
                if t is not None and t in self.built.constants and t not in tensors:
                    role = ROLES.get((op.op, arg), ROLES.get(arg, arg.lower()))
                    tensors[t] = f"{cname}_{role}"
                elif t is not None and t in self.built.states and t not in tensors:
                    tensors[t] = f"{cname}_{arg}"  # lstm_1_cell_state
        return ops, tensors

    def to_model(self) -> Model:
        """The model, checked as every model is (its shapes as inferred on import, its C
        names from the operators: :meth:`c_names`)."""
        b, at = self.built, InFile(str(self.source))
        w = at.where()
        op_cnames, cnames = self.c_names()
        asm = Assembly(self.name, self.source, at)
        asm.device_count(len(self.devices), w)
        for dev, kind in self.devices.items():
            asm.device(dev, kind, w, w)
        cast = {op.output for op in b.operators if op.op == "cast"}  # raw int8 may come out
        for role, names in (("input", b.inputs), ("output", self.outputs),
                            ("state", b.states)):
            if role == "output":  # no inputs: a model of constants (ONNX's Constant)
                asm.nonempty(role + "s", len(names), w)
            for t in names:
                asm.tensor(t, role, list(b.shapes[t]), b.dtypes[t], self._quant(t, at), w, at,
                           cnames.get(t) if role == "state" else None, raw=t in cast)
        for t, data in b.constants.items():
            asm.constant(t, list(data.shape), b.dtypes[t], _values(data, w), self._quant(t, at),
                         w, at, c_name=cnames.get(t))
        # Intermediates: their dtype and quant (the shape is inferred) and C spelling.
        for op in b.operators:
            if op.output not in self.outputs:
                asm.intermediate(op.output, None, b.dtypes[op.output],
                                 self._quant(op.output, at), w, at, cnames.get(op.output),
                                 raw=op.output in cast)
        asm.nonempty("operators", len(b.operators), w)
        for op in b.operators:
            asm.operator(op.output, op.op, list(op.inputs), [op.output], op.attrs, op.device,
                         w, at, at, op.inferred, c_name=op_cnames[op.output])
        return asm.finish()

    def _quant(self, t: str, at: InFile) -> QuantFields | None:
        q = self.built.quant.get(t)
        return QuantFields.of(q, at) if q is not None else None

    def place(self, devices: Sequence[str], places: Sequence[str]) -> list[str]:
        """Declare ``ID:KIND`` devices and put every operator of ``OPS=ID``'s kinds (tvmdev
        ops or source kinds, lower case: gemm, fully_connected) on that instance.

        One ``--place`` serves many models (conv2d,depthwise_conv2d,fully_connected=npu0),
        so a tvmdev op the model does not use is a note, returned; a kind that is neither
        a tvmdev op nor in the model (a typo) is an error, as is a list matching nothing."""
        decl: dict[str, str] = {}
        for spec in devices:
            dev, _, kind = spec.partition(":")
            if not dev or not kind:
                raise TvmdevError(f"--device {spec}: expected ID:KIND",
                                  hint="for example --device npu0:woofles")
            decl[dev] = kind
        self.devices = decl
        ops, notes = self.built.operators, []
        for spec in places:
            kinds, _, dev = spec.partition("=")
            if dev not in decl:
                raise TvmdevError(f"--place {spec}: no device '{dev}'",
                                  hint="declare it with --device " + (dev or "ID") + ":KIND")
            wanted = {k for k in kinds.split(",") if k}
            hit = set()
            for i, op in enumerate(ops):
                found = wanted & {op.op, op.kind.lower()}
                if found:
                    ops[i] = replace(op, device=dev)
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
        return {op.op for op in self.built.operators} | set(self.source_kinds)
