"""int8 LOGISTIC and TANH, TFLM's algorithms (logistic_common / tanh Prepare, and
reference_integer_ops::Logistic / Tanh): the input, less its zero point, saturates
outside +-input_range_radius; inside it is rescaled into Q4.27 (input_multiplier,
input_left_shift from frexp of input_scale * 2**27) and gemmlowp's fixed-point logistic
or tanh gives the result in Q0.31, rounded to 1/256 steps from -128 (logistic) or 1/128
steps around 0 (tanh).

TFLM computes these outputs whatever the output tensor's quantization says (it checks
only logistic's zero point, -128): the typical quantization (1/256, -128 and 1/128, 0) is
what the values mean. Params are ``tvmk_sigmoid_s8_params`` / ``tvmk_tanh_s8_params``
(``tvmk_s8_ops.h``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot
from ..quant import Quant
from ..shapes import Shape, numel
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar
from .gemmlowp import logistic, tanh
from .softmax import input_radius

INPUT_INTEGER_BITS = 4


def _params(shape: Shape, qin: Quant) -> dict[str, Any]:
    si, zi = scalar(qin, "the input")
    q, shift = math.frexp(si * (1 << (31 - INPUT_INTEGER_BITS)))
    mult = math.copysign(math.floor(abs(q) * (1 << 31) + 0.5), q)
    if mult >= 1 << 31 or not 0 <= shift <= 31:
        raise ValueError(f"input scale {si} is out of the range TFLite's int8 "
                         "logistic and tanh handle")
    return {"count": numel(shape), "input_zero_point": zi,
            "input_range_radius": input_radius(INPUT_INTEGER_BITS, shift),
            "input_multiplier": int(mult), "input_left_shift": shift}


def sigmoid_params(shape: Shape, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_sigmoid_s8_params`` (LOGISTIC); the output zero point must be -128."""
    _, zo = scalar(qout, "the output")
    if zo != -128:
        raise ValueError(f"an int8 logistic output must have zero point -128 (TFLM "
                         f"refuses others), got {zo}")
    return _params(shape, qin)


def tanh_params(shape: Shape, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_tanh_s8_params`` (TANH); TFLM reads nothing of the output's quantization."""
    scalar(qout, "the output")
    return _params(shape, qin)


def _fixed(x: np.ndarray, p: dict[str, Any], fn: Any, out_bits: int, offset: int
           ) -> np.ndarray:
    v = x.astype(np.int64) - p["input_zero_point"]
    radius = p["input_range_radius"]
    inside = (v > -radius) & (v < radius)
    safe = np.where(inside, v, 0)
    q4 = multiply_by_quantized_multiplier(safe, p["input_multiplier"],
                                          p["input_left_shift"])
    q0 = fn(q4, INPUT_INTEGER_BITS)
    out = np.clip(rounding_divide_by_pot(q0, 31 - out_bits) + offset, -128, 127)
    out = np.where(v <= -radius, -128, np.where(v >= radius, 127, out))
    return out.astype(np.int8)


def sigmoid_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 logistic of ``x`` with ``sigmoid_params``' values."""
    return _fixed(x, p, logistic, 8, -128)


def tanh_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 tanh of ``x`` with ``tanh_params``' values."""
    return _fixed(x, p, tanh, 7, 0)


@refusing
def _sigmoid_params(c: S8Call) -> dict[str, Any]:
    return sigmoid_params(c.out_shape, quant_of(c, 0, "the input"),
                          quant_of(c, -1, "the output"))


@refusing
def _tanh_params(c: S8Call) -> dict[str, Any]:
    return tanh_params(c.out_shape, quant_of(c, 0, "the input"), quant_of(c, -1, "the output"))


def _sigmoid_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return sigmoid_reference(np.asarray(x[0]), _sigmoid_params(c)).reshape(c.out_shape)


def _tanh_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return tanh_reference(np.asarray(x[0]), _tanh_params(c)).reshape(c.out_shape)


OPS = {
    "sigmoid": S8Op("tvmk_sigmoid_s8_params", _sigmoid_params, _sigmoid_ref, ("int8", "int8")),
    "tanh": S8Op("tvmk_tanh_s8_params", _tanh_params, _tanh_ref, ("int8", "int8")),
}
