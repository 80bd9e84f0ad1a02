"""The definition of an operator (:class:`OpDef`): its ONNX argument and attribute
names, its shape rule, its kernels' params struct and how the planner may treat it. The
table of operators is :data:`tvmdev.model.ops.OPS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .shapes import Shape


@dataclass(frozen=True)
class Attr:
    kind: str  # "float", "int", "bool", "ints", "str"
    default: Any  # None: required
    length: int | None = None  # for "ints": required length
    choices: tuple[str, ...] = ()  # for "str": the values allowed


@dataclass(frozen=True)
class OpDef:
    """One operator: its ONNX signature and how it maps to a C kernel."""

    name: str
    inputs: tuple[str, ...]
    optional: frozenset[str]
    outputs: tuple[str, ...]
    attrs: dict[str, Attr]
    params_struct: str
    infer: Callable[[list[Shape | None], dict[str, Any]], Shape]
    params: Callable[[list[Shape | None], Shape, dict[str, Any]], dict[str, Any]]
    # The output is the input's elements in the same order under another shape (reshape,
    # flatten): the planner lets it alias its input's buffer, and the executor calls no
    # kernel then. (Which kernels compute in place is kernel data: tvmdev.plan.inplace.)
    view: bool = False
    # The params struct ends with scratch_bytes and scratch: its kernels may be given
    # scratch in the workspace (tvmdev.model.scratch).
    scratch: bool = False
    doc: str = ""
    # The last input takes any number (>= 1) of tensors (concat's inputs); kernels get
    # them as an array of pointers.
    variadic: bool = False
    # Rewrites the checked attributes into the form infer and params take (auto_pad into
    # pads, 1-D windows into 2-D ones), given the input shapes; run once, at load time.
    resolve: Callable[[list[Shape | None], dict[str, Any]], dict[str, Any]] | None = None
    # Inputs that take int32 indices (gather's), not float32 values.
    index_inputs: frozenset[str] = frozenset()
    # Inputs that are the op's persistent state (TFLite's variable tensors: an LSTM's
    # hidden and cell state, an SVDF's memory): the kernel reads and updates them in place
    # (a non-const pointer), and they keep their values from one run to the next.
    states: frozenset[str] = frozenset()

    @property
    def required_inputs(self) -> int:
        """How many inputs the op cannot do without."""
        return sum(1 for a in self.inputs if a not in self.optional)

    def arg_names(self, count: int) -> tuple[str, ...]:
        """The argument name of each of ``count`` given inputs (a variadic op repeats
        its last one)."""
        if not self.variadic:
            return self.inputs[:count]
        return self.inputs[:-1] + (self.inputs[-1],) * (count - len(self.inputs) + 1)

    def takes(self, count: int) -> bool:
        """Whether the op accepts ``count`` inputs."""
        if self.variadic:
            return count >= len(self.inputs)
        return self.required_inputs <= count <= len(self.inputs)
