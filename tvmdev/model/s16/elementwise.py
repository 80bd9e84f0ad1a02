"""int16 ADD, SUB and MUL, as TFLM's add / sub / mul compute int16 (their int8
arithmetic with int16 clamps): ADD and SUB rescale both inputs to twice the larger input
scale with 15 bits of headroom (int8's 20), add or subtract, and rescale to the output;
any zero points, as TFLM's general int16 path (multipliers in double, SUB's too). MUL
multiplies and rescales once; TFLM requires zero points 0 for int16 MUL. Params are the
int8 forms' structs (``tvmk_add_s8_params``, ``tvmk_mul_s8_params``). MAXIMUM and MINIMUM
compare raw values, as TFLM does, so tvmdev requires one quantization throughout (as for
int8).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..s8 import elementwise as s8e
from ..s8.call import S8Call, S8Op, activation_range, per_tensor, quant_of, refusing
from ..shapes import ShapeError

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1
ADD_LEFT_SHIFT = 15  # TFLM's left_shift for int16 ADD and SUB


def _act(c: S8Call) -> tuple[int, int]:
    s, zp = per_tensor(c.out_quant, "the output")
    return activation_range(c.attrs.get("activation", "NONE"), s, zp, I16_MIN, I16_MAX)


@refusing
def _add_params(c: S8Call) -> dict[str, Any]:
    """ADD's and SUB's: the int8 form's multipliers, in double (TFLM's Python interpreter,
    the reference, derives SUB's so too, though sub_common.cc spells float32: the SEANet
    models tell), with int16's left shift and clamps."""
    p = s8e.add_params(c.shapes, c.out_shape, "NONE", quant_of(c, 0, "A"),
                       quant_of(c, 1, "B"), quant_of(c, -1, "the output"))
    (sa, _), (sb, _), (so, _) = (per_tensor(c.quants[i], w)
                                 for i, w in ((0, "A"), (1, "B"), (-1, "the output")))
    twice_max = 2.0 * max(float(np.float32(sa)), float(np.float32(sb)))
    real_out = twice_max / ((1 << ADD_LEFT_SHIFT) * float(np.float32(so)))
    if real_out >= 1.0:  # QuantizeMultiplierSmallerThanOneExp's TFLITE_CHECK
        raise ValueError(f"the output scale {so} is too small for the inputs' ({sa}, {sb}): "
                         "TFLM aborts")
    p["out_multiplier"], p["out_shift"] = quantize_multiplier(real_out)
    lo, hi = _act(c)
    return {**p, "left_shift": ADD_LEFT_SHIFT, "act_min": lo, "act_max": hi}


def _add_reference(a: np.ndarray, b: np.ndarray, p: dict[str, Any], sub: bool
                   ) -> np.ndarray:
    a32, b32 = np.broadcast_arrays(a.astype(np.int64) + p["a_offset"],
                                   b.astype(np.int64) + p["b_offset"])
    lift = 1 << p["left_shift"]
    sa = multiply_by_quantized_multiplier(a32 * lift, p["a_multiplier"], p["a_shift"])
    sb = multiply_by_quantized_multiplier(b32 * lift, p["b_multiplier"], p["b_shift"])
    total = multiply_by_quantized_multiplier(sa - sb if sub else sa + sb,
                                             p["out_multiplier"], p["out_shift"])
    return np.asarray(np.clip(total + p["out_offset"], p["act_min"], p["act_max"]), np.int16)


def _add_ref(sub: bool) -> Any:
    def ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        a, b = x[0], x[1]
        assert a is not None and b is not None
        return _add_reference(np.asarray(a), np.asarray(b), _add_params(c),
                              sub).reshape(c.out_shape)
    return ref


@refusing
def _mul_params(c: S8Call) -> dict[str, Any]:
    p = s8e.mul_params(c.shapes, c.out_shape, "NONE", quant_of(c, 0, "A"),
                       quant_of(c, 1, "B"), quant_of(c, -1, "the output"))
    if (p["a_offset"], p["b_offset"], p["out_offset"]) != (0, 0, 0):
        raise ShapeError("int16 mul: TFLM requires zero points 0 on both inputs and the "
                         "output")
    lo, hi = _act(c)
    return {**p, "act_min": lo, "act_max": hi}


def _mul_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    a, b = x[0], x[1]
    assert a is not None and b is not None
    p = _mul_params(c)
    prod = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    scaled = multiply_by_quantized_multiplier(prod, p["out_multiplier"], p["out_shift"])
    out = np.clip(scaled + p["out_offset"], p["act_min"], p["act_max"])
    return np.asarray(out, np.int16).reshape(c.out_shape)


def _minmax_ref(pick: Any) -> Any:
    def ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        s8e.OPS["maximum"].params(c)  # one quantization throughout, as int8's
        a, b = x[0], x[1]
        assert a is not None and b is not None
        return np.asarray(pick(np.asarray(a), np.asarray(b)), np.int16).reshape(c.out_shape)
    return ref


OPS = {
    "maximum": S8Op("tvmk_binary_params", s8e.OPS["maximum"].params, _minmax_ref(np.maximum),
                    ("int16", "int16", "int16")),
    "minimum": S8Op("tvmk_binary_params", s8e.OPS["minimum"].params, _minmax_ref(np.minimum),
                    ("int16", "int16", "int16")),
    "add": S8Op("tvmk_add_s8_params", _add_params, _add_ref(False),
                ("int16", "int16", "int16")),
    "sub": S8Op("tvmk_add_s8_params", _add_params, _add_ref(True),
                ("int16", "int16", "int16")),
    "mul": S8Op("tvmk_mul_s8_params", _mul_params, _mul_ref, ("int16", "int16", "int16")),
}
