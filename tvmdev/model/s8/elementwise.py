"""int8 ADD and MUL (TFLite's quantized arithmetic, as TFLM's add_common / mul_common
Prepare derive it), with numpy broadcasting and fused activations; and the quantized
range of a fused activation that every int8 kernel with one clamps to.

ADD rescales both inputs to a common scale (twice the larger input scale) with 20 bits
of headroom, adds, and rescales the sum to the output; MUL multiplies the zero-point
corrected inputs and rescales the product once. Params are the C struct's fields
(``tvmk_add_s8_params``, ``tvmk_mul_s8_params`` in ``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier, tflite_round
from ..shapes import Shape, binary_params
from . import Quant

INT8_MIN, INT8_MAX = -128, 127
ADD_LEFT_SHIFT = 20  # TFLM's left_shift for int8 ADD (15 for int16)


def scalar(q: Quant, what: str) -> tuple[float, int]:
    """The one (scale, zero point) of a per-tensor quantization; ValueError otherwise."""
    if q.per_channel:
        raise ValueError(f"{what} must be quantized per tensor, not per channel")
    return float(np.float32(q.scale[0])), int(q.zero_point[0])


def quantize_real(scale: float, zero_point: int, value: float) -> int:
    """TFLite's ``Quantize`` of an activation bound: zero_point + round(value / scale),
    divided and rounded in float32 (half away from zero), as kernel_util.cc does."""
    ratio = np.float32(value) / np.float32(scale)
    return zero_point + tflite_round(float(ratio))


def activation_range(activation: str, out: Quant) -> tuple[int, int]:
    """TFLite's ``CalculateActivationRangeQuantized`` for an int8 output: the clamp of a
    fused activation (NONE, RELU, RELU6, RELU_N1_TO_1; TANH clamps nothing)."""
    scale, zp = scalar(out, "the output")
    lo, hi = INT8_MIN, INT8_MAX
    if activation in ("RELU", "RELU6"):
        lo = max(lo, quantize_real(scale, zp, 0.0))
    if activation == "RELU6":
        hi = min(hi, quantize_real(scale, zp, 6.0))
    if activation == "RELU_N1_TO_1":
        lo = max(lo, quantize_real(scale, zp, -1.0))
        hi = min(hi, quantize_real(scale, zp, 1.0))
    return lo, hi


def _broadcast(shapes: list[Shape | None], out: Shape) -> dict[str, Any]:
    base = binary_params(shapes, out, {})
    del base["activation"]
    return base


def add_params(shapes: list[Shape | None], out: Shape, activation: str, qa: Quant,
               qb: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_add_s8_params`` for A (``qa``) + B (``qb``) into ``qout``."""
    (sa, za), (sb, zb), (so, zo) = (scalar(qa, "A"), scalar(qb, "B"),
                                    scalar(qout, "the output"))
    twice_max = 2.0 * max(sa, sb)
    a_mult, a_shift = quantize_multiplier(sa / twice_max)
    b_mult, b_shift = quantize_multiplier(sb / twice_max)
    real_out = twice_max / ((1 << ADD_LEFT_SHIFT) * so)
    if real_out >= 1.0:  # QuantizeMultiplierSmallerThanOneExp's TFLITE_CHECK
        raise ValueError(f"the output scale {so} is too small for the inputs' ({sa}, {sb}): "
                         "TFLM aborts")
    o_mult, o_shift = quantize_multiplier(real_out)
    lo, hi = activation_range(activation, qout)
    return {**_broadcast(shapes, out), "a_offset": -za, "b_offset": -zb,
            "left_shift": ADD_LEFT_SHIFT, "a_multiplier": a_mult, "a_shift": a_shift,
            "b_multiplier": b_mult, "b_shift": b_shift, "out_multiplier": o_mult,
            "out_shift": o_shift, "out_offset": zo, "act_min": lo, "act_max": hi}


def mul_params(shapes: list[Shape | None], out: Shape, activation: str, qa: Quant,
               qb: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_mul_s8_params`` for A (``qa``) * B (``qb``) into ``qout``."""
    (sa, za), (sb, zb), (so, zo) = (scalar(qa, "A"), scalar(qb, "B"),
                                    scalar(qout, "the output"))
    mult, shift = quantize_multiplier(sa * sb / so)
    lo, hi = activation_range(activation, qout)
    return {**_broadcast(shapes, out), "a_offset": -za, "b_offset": -zb,
            "out_multiplier": mult, "out_shift": shift, "out_offset": zo,
            "act_min": lo, "act_max": hi}


def _clamp(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    out: np.ndarray = np.clip(x, p["act_min"], p["act_max"]).astype(np.int8)
    return out


def add_reference(a: np.ndarray, b: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 A + B (numpy broadcasting) with ``add_params``' values."""
    a32, b32 = np.broadcast_arrays(a.astype(np.int64) + p["a_offset"],
                                   b.astype(np.int64) + p["b_offset"])
    lift = 1 << p["left_shift"]
    sa = multiply_by_quantized_multiplier(a32 * lift, p["a_multiplier"], p["a_shift"])
    sb = multiply_by_quantized_multiplier(b32 * lift, p["b_multiplier"], p["b_shift"])
    total = multiply_by_quantized_multiplier(sa + sb, p["out_multiplier"], p["out_shift"])
    return _clamp(total + p["out_offset"], p)


def mul_reference(a: np.ndarray, b: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 A * B (numpy broadcasting) with ``mul_params``' values."""
    prod = (a.astype(np.int64) + p["a_offset"]) * (b.astype(np.int64) + p["b_offset"])
    scaled = multiply_by_quantized_multiplier(prod, p["out_multiplier"], p["out_shift"])
    return _clamp(scaled + p["out_offset"], p)
