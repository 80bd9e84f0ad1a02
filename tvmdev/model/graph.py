"""The model as tvmdev plans it: devices, tensors and operators, frozen.

No I/O here: loaders (``tvmdev.load``) and front ends build these; planners read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Where
from .ops import op_params
from .quant import Q4Weight, Quant
from .rawint.form import RAW_SIZES, is_raw
from .rawint.table import INT_OPS
from .s8.call import op_dtype
from .shapes import Shape, numel

# q4c32: constants only, sized as their floats
DTYPE_SIZE = {"float32": 4, "q4c32": 4, "int8": 1, "int32": 4, "int64": 8, **RAW_SIZES}


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
    role: str  # "input", "output", "constant", "intermediate" or "state"
    cname: str  # the C spelling of the name
    where: Where
    quant: Quant | None = None  # int8 (and int32 bias): the affine quantization

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
    # The attributes as the description (or the front end) gives them, in its order: what
    # an export writes back. ``attrs`` holds them checked, completed and resolved.
    given: tuple[tuple[str, Any], ...] = ()

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
    # Persistent state (TFLite's variable tensors): read and updated in place by one
    # operator each, kept from one run to the next, reset to :meth:`state_fill`.
    states: tuple[str, ...] = ()
    # Row slices (patch-based inference, tvmdev.plan.patch): a tensor that is rows of
    # another, by name -> (that tensor, the offset of its first element). It has no bytes
    # of its own: the plan gives it none, and the executor points it into its parent.
    slices: dict[str, tuple[str, int]] = field(default_factory=dict)
    # (operator index, input position) whose constant the operator's kernel does not
    # read: it reads a layout of it made at generation time (a params array) instead, and
    # gets NULL there. A constant every reader replaces is not emitted.
    replaced: frozenset[tuple[int, int]] = frozenset()

    def device(self, name: str) -> Device:
        """The device instance called ``name``."""
        return next(d for d in self.devices if d.name == name)

    def operator_params(self, op: Operator) -> tuple[str, dict[str, Any]]:
        """The params struct of ``op``'s kernels (its int8 form's for an int8 operator) and
        its values, shapes and attributes resolved. The pipeline computes these once per
        operator (tvmdev.plan.prepare); everything downstream reads its records."""
        ts = [self.tensors[t] if t is not None else None for t in op.inputs]
        out = self.tensors[op.outputs[0]]
        attrs = dict(op.attr_dict)
        # Facts about the operands the kernels may use (an accelerator packs constants once).
        attrs["_b_constant"] = int(len(op.inputs) > 1 and ts[1] is not None
                                   and ts[1].role == "constant")
        return op_params(op.op, [t.shape if t else None for t in ts], out.shape, attrs,
                         [t.dtype if t else None for t in ts] + [out.dtype],
                         [t.quant if t else None for t in ts] + [out.quant])

    def op_dtype(self, op: Operator) -> str:
        """The dtype ``op`` computes in: "raw" in its raw-integer form
        (:mod:`tvmdev.model.rawint`), else as :func:`~.s8.call.op_dtype` says: int16 when
        its first input or its output is int16, else int8 when any of its tensors is int8,
        else float32."""
        names = [t for t in (*op.inputs, *op.outputs) if t is not None]
        if is_raw(INT_OPS.get(op.op), [self.tensors[t].dtype for t in names],
                  [self.tensors[t].quant for t in names]):
            return "raw"
        return op_dtype([self.tensors[t].dtype for t in names])

    def state_fill(self, name: str) -> int:
        """The byte a state tensor is reset to, as TFLM's ResetVariableTensors: an int8
        one's zero point, else 0."""
        t = self.tensors[name]
        if t.dtype == "int8" and t.quant is not None:
            return t.quant.zero_point[0] & 0xFF
        return 0

    @property
    def unread_constants(self) -> frozenset[str]:
        """The constants no operator reads, its kernel's layout of it aside (the executor
        does not emit them)."""
        read = {t for op in self.operators for i, t in enumerate(op.inputs)
                if (op.index, i) not in self.replaced}
        return frozenset(n for n in self.constants if n not in read)

    @property
    def replaced_constants(self) -> frozenset[str]:
        """The constants not emitted because each reader's kernel reads a layout of it."""
        laid = {op.inputs[i] for op in self.operators for i in range(len(op.inputs))
                if (op.index, i) in self.replaced}
        return frozenset(n for n in self.unread_constants if n in laid)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The device kinds the model uses, in order of first appearance."""
        return tuple(dict.fromkeys(d.kind for d in self.devices))
