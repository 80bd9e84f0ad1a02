"""int16 LOGISTIC and TANH, as TFLM computes them (logistic_common.cc and tanh.cc Prepare;
reference_integer_ops::Logistic and Tanh of int16).

Prepare: zero points 0 in and out, and an output scale of 2**-15 (``CheckedLog2``: its
log2 within 1e-3 of -15). The input is rescaled to 1/(3 * 4096) a step: by the multiplier
3 << shift when the input scale is a power of two that makes ``shift`` 0 (LOGISTIC) or 0
or 1 (TANH: the doubling, 2 sigmoid(2x) - 1), else by ``int(scale * 3 * 4096 * 2**k)``
and a rounding right shift k, k the least that brings the multiplier above 32767 / 2 (at
most 31). Eval interpolates TFLM's 256-entry sigmoid table (:mod:`..s8.lstm_table`: read
from TFLM's or CMSIS-NN's tree, never shipped) into Q0.15.

Params are ``tvmk_sigmoid_s16_params`` (``tvmk_s16.h``) for both ops, the table a
static const array beside them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..s8.call import CArray, S8Call, S8Op, per_tensor, quant_of, refusing
from ..s8.lstm_table import scaled, sigmoid_of_scaled, sigmoid_table, tanh_of_scaled
from ..shapes import ShapeError, numel

F32 = np.float32
INPUT_INTEGER_BITS = 3
OUTPUT_FRACTIONAL_BITS = 15
# A power-of-two input scale needs no multiplier when its shift is one of these.
POT_SHIFTS = {"sigmoid": (0,), "tanh": (0, 1)}
NAMES = {"sigmoid": "logistic", "tanh": "tanh"}


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's ``CheckedLog2`` in float32: whether ``x`` is within 1e-3 (in log2) of a
    power of two, and that power (rounded halves away from zero)."""
    log2 = F32(F32(math.log(F32(x))) * (F32(1) / F32(math.log(F32(2)))))
    rounded = F32(math.copysign(math.floor(abs(float(log2)) + 0.5), float(log2)))
    return bool(abs(F32(log2 - rounded)) < F32(1e-3)), int(rounded)


def input_scaling(op: str, scale: float) -> tuple[int, int]:
    """TFLM's (input_multiplier, input_left_shift) of an int16 ``op`` (sigmoid or tanh)
    whose input has ``scale``: (0, shift) in the power-of-two case."""
    pot, log2 = checked_log2(scale)
    shift = (15 - INPUT_INTEGER_BITS) + log2
    if pot and shift in POT_SHIFTS[op]:
        return 0, shift
    multiplier, shift = float(F32(scale)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    if multiplier >= 32768.0:
        raise ShapeError(f"int16 {NAMES[op]}: the input scale {float(F32(scale))} is above "
                         "32767 / 12288: TFLM's input multiplier would pass 32767 (its kernel "
                         "checks that only in debug builds, then overflows)")
    return int(multiplier), shift


@refusing
def lut_params(c: S8Call, op: str) -> dict[str, Any]:
    """``tvmk_sigmoid_s16_params`` of ``op`` (sigmoid or tanh)."""
    (si, zi) = per_tensor(quant_of(c, 0, "the input"), "the input")
    (so, zo) = per_tensor(quant_of(c, -1, "the output"), "the output")
    if zi != 0 or zo != 0:
        raise ShapeError(f"int16 {NAMES[op]}: TFLM requires zero points 0 on the input and "
                         f"the output, got {zi} and {zo}")
    pot, log2 = checked_log2(so)
    if not pot or log2 != -OUTPUT_FRACTIONAL_BITS:
        raise ShapeError(f"int16 {NAMES[op]}: the output scale must be 2^-15 (TFLM "
                         f"refuses others), got {float(F32(so))}")
    multiplier, shift = input_scaling(op, si)
    return {"count": numel(c.out_shape), "input_multiplier": multiplier,
            "input_left_shift": shift,
            "sigmoid_table": CArray("uint16_t", sigmoid_table(f"an int16 {NAMES[op]}"))}


def lut_reference(x: np.ndarray, p: dict[str, Any], op: str) -> np.ndarray:
    """int16 ``op`` of ``x`` with :func:`lut_params`' values."""
    multiplier, shift = p["input_multiplier"], p["input_left_shift"]
    if multiplier == 0:
        multiplier, shift = 3 << shift, 0
    v = scaled(x, multiplier, shift)
    who = f"an int16 {NAMES[op]}"
    out = sigmoid_of_scaled(v, who) if op == "sigmoid" else tanh_of_scaled(v, who)
    return np.asarray(out, np.int16)


def _form(op: str) -> S8Op:
    def params(c: S8Call) -> dict[str, Any]:
        result: dict[str, Any] = lut_params(c, op)
        return result

    def reference(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        assert x[0] is not None
        return lut_reference(np.asarray(x[0]), params(c), op).reshape(c.out_shape)

    return S8Op("tvmk_sigmoid_s16_params", params, reference, ("int16", "int16"))


OPS = {op: _form(op) for op in ("sigmoid", "tanh")}
