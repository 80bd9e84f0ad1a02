"""What an int8 operator's form is made of: :class:`S8Op` (the params struct of its
kernels, how generation derives those params from the tensors' quantization as TFLM's
Prepare does, and the numpy reference computing the same integer arithmetic), the
:class:`S8Call` they are given, and the helpers every family module shares (per-tensor
quantization, TFLite's activation range). :mod:`.table` gathers the families' entries.

Adding an int8 op: its family module's ``OPS`` maps the tvmdev op to an ``S8Op`` (the
C params struct; ``params(call)`` returning the struct's fields as ints, floats, or
:class:`CArray` for a pointer to a static const array; ``reference(call, inputs)``
returning the output as numpy int8 (or float32); the dtypes), :mod:`.table` merges it,
and the kernel is listed under the op's entry of the portable ``kernels.yaml`` with an
int8 ``arg_meta`` and its own ``header:``. The loader then accepts the op on int8
tensors, generation emits its params, and ``tvmdev run`` compares it exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..quant import Quant
from ..shapes import Shape, ShapeError

QMIN, QMAX = -128, 127


@dataclass(frozen=True)
class CArray:
    """A params field that points to a static const array (per-channel multipliers and
    shifts): the renderer emits the array beside the params struct."""

    ctype: str  # "int32_t"
    values: tuple[int, ...]
    # the operator's input positions whose data this array carries for its kernel, which
    # then reads neither of them (Model.replaced): a filter widened, a bias folded
    replaces: tuple[int, ...] = ()


@dataclass(frozen=True)
class S8Call:
    """What an int8 operator's params and reference are derived from."""

    shapes: list[Shape | None]
    out_shape: Shape
    attrs: dict[str, Any]
    dtypes: list[str | None]  # of each input (None: absent), then of the output
    quants: list[Quant | None]  # of each input (None: absent or unquantized), then output

    @property
    def out_quant(self) -> Quant | None:
        """The output's quantization."""
        return self.quants[-1]


Params = Callable[[S8Call], dict[str, Any]]
Reference = Callable[[S8Call, list[np.ndarray | None]], np.ndarray]


@dataclass(frozen=True)
class S8Op:
    """The int8 form of one op."""

    params_struct: str
    params: Params
    reference: Reference
    # The dtype of each input (the last repeated for a variadic op; "float32|int8": either),
    # then the output's.
    dtypes: tuple[str, ...]
    # The params struct ends with scratch_bytes and scratch (tvmk_portable.h): a board
    # library's kernel of the op may be given a buffer in the workspace (cmsis_nn's).
    scratch: bool = False


# The dtypes of quantized activations, each with its own table of forms (int8: .table's
# S8OPS; int16, TFLite's 16x8 scheme: tvmdev.model.s16's S16OPS).
QUANTIZED = ("int8", "int16")


def op_dtype(dtypes: Sequence[str | None]) -> str:
    """The dtype an operator computes in (``dtypes``: its inputs', then its output's):
    int16 when its first input or its output is int16 (16x8: int8 weights), else int8
    when any of its tensors is int8 (an int8 op may read int16 constants or state, as
    SVDF's), else float32."""
    if "int16" in (dtypes[0], dtypes[-1]):
        return "int16"
    return "int8" if "int8" in dtypes else "float32"


def check_dtypes(op: str, entry: S8Op, call: S8Call) -> None:
    """Each tensor of an int8 operator has the dtype its kernels take (``entry.dtypes``:
    one per input, the last repeated for more inputs, then the output's)."""
    want_in, want_out = entry.dtypes[:-1], entry.dtypes[-1]
    form = op_dtype(call.dtypes)
    for i, dt in enumerate(call.dtypes[:-1]):
        want = want_in[min(i, len(want_in) - 1)]
        if dt is not None and dt not in want.split("|"):
            raise ShapeError(f"{form} {op}: input {i} is {dt}; its {form} kernels take "
                             f"{want}")
    if call.dtypes[-1] not in want_out.split("|"):
        raise ShapeError(f"{form} {op}: the output is {call.dtypes[-1]}; its {form} kernels "
                         f"write {want_out}")


def per_tensor(q: Quant | None, what: str) -> tuple[float, int]:
    """The scale and zero point of a tensor quantized per tensor."""
    if q is None:
        raise ShapeError(f"{what} is int8 but has no quant (scale and zero_point)")
    if q.per_channel:
        raise ShapeError(f"{what} must be quantized per tensor, not per channel "
                         f"({len(q.scale)} scales)")
    return q.scale[0], q.zero_point[0]


def quant_of(c: S8Call, i: int, what: str) -> Quant:
    """The quantization of input ``i`` (-1: the output) of an int8 or int16 operator."""
    q = c.quants[i]
    if q is None:
        raise ShapeError(f"{what} is {c.dtypes[i]} but has no quant (scale and zero_point)")
    return q


def refusing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the ValueError a family module raises for what TFLM refuses turned
    into a ShapeError (the loader reports it as one line naming the operator)."""
    @functools.wraps(fn)
    def wrapped(*args: Any) -> Any:
        try:
            return fn(*args)
        except ShapeError:
            raise
        except (ValueError, OverflowError) as exc:
            raise ShapeError(str(exc)) from None
    return wrapped


def activation_range(act: str, scale: float, zero_point: int, qmin: int = QMIN,
                     qmax: int = QMAX) -> tuple[int, int]:
    """TFLite's ``CalculateActivationRangeQuantized`` for int8 (int16: ``qmin`` and
    ``qmax`` its range): the fused activation's bounds quantized (``zero_point + round(f
    / scale)``, the division in float32, halves away from zero) and clamped to [-128,
    127]."""
    def quantize(f: float) -> int:
        r = np.float64(np.float32(f) / np.float32(scale))
        return zero_point + int(np.sign(r) * np.floor(np.abs(r) + 0.5))

    bounds = {"NONE": (qmin, qmax),
              "RELU": (max(qmin, quantize(0.0)), qmax),
              "RELU6": (max(qmin, quantize(0.0)), min(qmax, quantize(6.0))),
              "RELU_N1_TO_1": (max(qmin, quantize(-1.0)), min(qmax, quantize(1.0)))}
    if act not in bounds:
        raise ShapeError(f"the fused activation {act} has no int8 form (TFLM's int8 kernels "
                         "ignore it: they clamp to [-128, 127])")
    return bounds[act]
