"""The model as tvmdev plans it: devices, tensors and operators, frozen.

No I/O here: loaders (``tvmdev.load``) and front ends build these; planners read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Where
from .ops import OPS
from .quant import Q4Weight
from .shapes import Shape, numel

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
        """The tensor's size in bytes."""
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
        """The attributes as a dict."""
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
        """The device instance called ``name``."""
        return next(d for d in self.devices if d.name == name)

    def call_params(self, op: Operator) -> dict[str, Any]:
        """The values of ``op``'s params struct (shapes and attributes resolved)."""
        shapes = [self.tensors[t].shape if t is not None else None for t in op.inputs]
        attrs = dict(op.attr_dict)
        # Facts about the operands the kernels may use (an accelerator packs constants once).
        attrs["_b_constant"] = int(len(op.inputs) > 1 and op.inputs[1] is not None
                                   and self.tensors[op.inputs[1]].role == "constant")
        return OPS[op.op].params(shapes, self.tensors[op.outputs[0]].shape, attrs)

    @property
    def unread_constants(self) -> frozenset[str]:
        """The constants no operator reads (the executor does not emit them)."""
        read = {t for op in self.operators for t in op.inputs}
        return frozenset(n for n in self.constants if n not in read)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The device kinds the model uses, in order of first appearance."""
        return tuple(dict.fromkeys(d.kind for d in self.devices))
