"""int8 ADD, SUB, MUL, MAXIMUM and MINIMUM (TFLite's quantized arithmetic, as TFLM's
add_common / sub_common / mul_common Prepare derive it), with numpy broadcasting and fused
activations.

ADD rescales both inputs to a common scale (twice the larger input scale) with 20 bits
of headroom, adds, and rescales the sum to the output; MUL multiplies the zero-point
corrected inputs and rescales the product once. SUB is ADD's arithmetic with the
rescaled B subtracted (TFLM's SubElementwise). MAXIMUM and MINIMUM compare the raw
values, as TFLM does, so tvmdev requires one quantization on both inputs and the output.
Params are the C structs' fields (``tvmk_add_s8_params`` for ADD and SUB,
``tvmk_mul_s8_params`` in ``tvmk_s8_ops.h``; ``tvmk_binary_params`` for MAXIMUM and
MINIMUM).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..quant import Quant
from ..shapes import Shape, binary_params
from .call import S8Call, S8Op, activation_range, quant_of, refusing

INT8_MIN, INT8_MAX = -128, 127
ADD_LEFT_SHIFT = 20  # TFLM's left_shift for int8 ADD (15 for int16)


def scalar(q: Quant, what: str) -> tuple[float, int]:
    """The one (scale, zero point) of a per-tensor quantization; ValueError otherwise."""
    if q.per_channel:
        raise ValueError(f"{what} must be quantized per tensor, not per channel")
    return float(np.float32(q.scale[0])), int(q.zero_point[0])


def act_range(activation: str, out: Quant) -> tuple[int, int]:
    """The int8 clamp of a fused activation on an output quantized as ``out`` (one
    rule for every int8 op: :func:`.call.activation_range`)."""
    scale, zp = scalar(out, "the output")
    return activation_range(activation, scale, zp)


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
    lo, hi = act_range(activation, qout)
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
    lo, hi = act_range(activation, qout)
    return {**_broadcast(shapes, out), "a_offset": -za, "b_offset": -zb,
            "out_multiplier": mult, "out_shift": shift, "out_offset": zo,
            "act_min": lo, "act_max": hi}


def _clamp(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    out: np.ndarray = np.clip(x, p["act_min"], p["act_max"]).astype(np.int8)
    return out


def add_reference(a: np.ndarray, b: np.ndarray, p: dict[str, Any], sub: bool = False
                  ) -> np.ndarray:
    """int8 A + B (A - B when ``sub``; numpy broadcasting) with ``add_params``' values."""
    a32, b32 = np.broadcast_arrays(a.astype(np.int64) + p["a_offset"],
                                   b.astype(np.int64) + p["b_offset"])
    lift = 1 << p["left_shift"]
    sa = multiply_by_quantized_multiplier(a32 * lift, p["a_multiplier"], p["a_shift"])
    sb = multiply_by_quantized_multiplier(b32 * lift, p["b_multiplier"], p["b_shift"])
    total = multiply_by_quantized_multiplier(sa - sb if sub else sa + sb,
                                             p["out_multiplier"], p["out_shift"])
    return _clamp(total + p["out_offset"], p)


def mul_reference(a: np.ndarray, b: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 A * B (numpy broadcasting) with ``mul_params``' values."""
    prod = (a.astype(np.int64) + p["a_offset"]) * (b.astype(np.int64) + p["b_offset"])
    scaled = multiply_by_quantized_multiplier(prod, p["out_multiplier"], p["out_shift"])
    return _clamp(scaled + p["out_offset"], p)


def _operands(c: S8Call) -> tuple[Quant, Quant, Quant]:
    return (quant_of(c, 0, "A"), quant_of(c, 1, "B"), quant_of(c, -1, "the output"))


@refusing
def _add_params(c: S8Call) -> dict[str, Any]:
    return add_params(c.shapes, c.out_shape, c.attrs.get("activation", "NONE"),
                      *_operands(c))


@refusing
def _mul_params(c: S8Call) -> dict[str, Any]:
    return mul_params(c.shapes, c.out_shape, c.attrs.get("activation", "NONE"),
                      *_operands(c))


def _add_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    a, b = x[0], x[1]
    assert a is not None and b is not None
    return add_reference(np.asarray(a), np.asarray(b), _add_params(c)).reshape(c.out_shape)


def _sub_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    a, b = x[0], x[1]
    assert a is not None and b is not None
    return add_reference(np.asarray(a), np.asarray(b), _add_params(c),
                         sub=True).reshape(c.out_shape)


@refusing
def _minmax_params(c: S8Call) -> dict[str, Any]:
    qa, qb, qo = _operands(c)
    if not scalar(qa, "A") == scalar(qb, "B") == scalar(qo, "the output"):
        raise ValueError("A, B and the output must share one quantization (int8 maximum "
                         "and minimum compare raw values, as TFLM does)")
    return {**_broadcast(c.shapes, c.out_shape), "activation": 0}


def _minmax_ref(pick: Any) -> Any:
    def ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        _minmax_params(c)
        a, b = x[0], x[1]
        assert a is not None and b is not None
        out: np.ndarray = pick(np.asarray(a), np.asarray(b)).astype(np.int8)
        return out.reshape(c.out_shape)
    return ref


def _mul_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    a, b = x[0], x[1]
    assert a is not None and b is not None
    return mul_reference(np.asarray(a), np.asarray(b), _mul_params(c)).reshape(c.out_shape)


OPS = {
    "add": S8Op("tvmk_add_s8_params", _add_params, _add_ref, ("int8", "int8", "int8")),
    "sub": S8Op("tvmk_add_s8_params", _add_params, _sub_ref, ("int8", "int8", "int8")),
    "mul": S8Op("tvmk_mul_s8_params", _mul_params, _mul_ref, ("int8", "int8", "int8")),
    "maximum": S8Op("tvmk_binary_params", _minmax_params, _minmax_ref(np.maximum),
                    ("int8", "int8", "int8")),
    "minimum": S8Op("tvmk_binary_params", _minmax_params, _minmax_ref(np.minimum),
                    ("int8", "int8", "int8")),
}
