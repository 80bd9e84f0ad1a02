"""quantize (float32 -> int8) and dequantize (int8 -> float32), and reshape of int8 data,
as TFLM computes them.

quantize of int8 (a requantization) is TFLM's ``Requantize``:
``MultiplyByQuantizedMultiplier(q - input_zero_point) + zero_point``, clamped.
quantize of float32 is TFLM's ``AffineQuantize``: ``round(x / scale) + zero_point`` clamped to
[-128, 127], the division in float32 and the rounding halves away from zero
(``TfLiteRound``); a NaN becomes -128 (TFLM leaves it undefined). dequantize is
``(q - zero_point) * scale`` (TFLM computes it in double from the float32 scale and
rounds to float32 once: the product of a float32 and a 9-bit integer is exact in double,
so this is the float32 product).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..shapes import ShapeError, numel
from .call import QMAX, QMIN, S8Call, S8Op, per_tensor


def round_half_away(x: np.ndarray) -> np.ndarray:
    """``std::round`` of float32 values (halves away from zero), computed in float64 where
    ``|x| + 0.5`` is exact."""
    v = np.asarray(x, np.float64)
    return np.asarray(np.sign(v) * np.floor(np.abs(v) + 0.5))


def _quantize_params(c: S8Call) -> dict[str, Any]:
    """float32 -> int8; or int8 -> int8 (TFLM's Requantize: the multiplier and shift of
    input_scale / output_scale, in double)."""
    scale, zp = per_tensor(c.out_quant, "the output of quantize")
    p = {"count": numel(c.out_shape), "scale": scale, "zero_point": zp,
         "input_zero_point": 0, "multiplier": 0, "shift": 0}
    if c.dtypes[0] == "int8":
        s_in, zp_in = per_tensor(c.quants[0], "the input of quantize")
        try:
            mult, shift = quantize_multiplier(float(s_in) / float(scale))
        except ValueError as exc:
            raise ShapeError(f"quantize: the requantization scale: {exc}") from None
        if shift > 0 and (255 << shift) > (1 << 31) - 1:
            # TFLM shifts (x - zero point) left by it in int32: beyond 2^23 that overflows
            # (its result wraps to garbage), so no int8 -> int8 requantization needs it.
            raise ShapeError(f"requantizing by {float(s_in) / float(scale):g} (input "
                             "scale / output scale) overflows TFLM's int32 arithmetic; "
                             "the ratio must be below 2^23")
        p.update(input_zero_point=zp_in, multiplier=mult, shift=shift)
    return p


def _quantize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    scale, zp = per_tensor(c.out_quant, "the output of quantize")
    v = x[0]
    assert v is not None
    if c.dtypes[0] == "int8":
        p = _quantize_params(c)
        y = multiply_by_quantized_multiplier(np.asarray(v, np.int64) - p["input_zero_point"],
                                             p["multiplier"], p["shift"]) + zp
        return np.asarray(np.clip(y, QMIN, QMAX), np.int8)
    with np.errstate(all="ignore"):
        r = round_half_away(np.asarray(v, np.float32) / np.float32(scale))
        q = np.where(np.isnan(r), QMIN, np.clip(np.nan_to_num(r, posinf=1e9, neginf=-1e9)
                                               + zp, QMIN, QMAX))
    return q.astype(np.int8)


def _dequantize_params(c: S8Call) -> dict[str, Any]:
    scale, zp = per_tensor(c.quants[0], "the input of dequantize")
    # Every field of the struct it shares with quantize and requantize, written: the
    # requantization fields are requantize's only, and 0 here as in quantize.
    return {"count": numel(c.out_shape), "scale": scale, "zero_point": zp,
            "input_zero_point": 0, "multiplier": 0, "shift": 0}


def _dequantize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    scale, zp = per_tensor(c.quants[0], "the input of dequantize")
    v = x[0]
    assert v is not None
    return np.asarray((np.asarray(v, np.int32) - zp).astype(np.float32)
                      * np.float32(scale))


def _reshape_params(c: S8Call) -> dict[str, Any]:
    # TFLM copies the bytes whatever the two tensors' quantization (the converter makes
    # them equal).
    return {"count": numel(c.out_shape)}


def _reshape_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return np.asarray(v).reshape(c.out_shape)


OPS = {
    "quantize": S8Op("tvmk_quantize_s8_params", _quantize_params, _quantize_ref,
                     ("float32|int8", "int8")),
    "dequantize": S8Op("tvmk_quantize_s8_params", _dequantize_params, _dequantize_ref,
                       ("int8", "float32")),
    "reshape": S8Op("tvmk_unary_params", _reshape_params, _reshape_ref, ("int8", "int8")),
    "flatten": S8Op("tvmk_unary_params", _reshape_params, _reshape_ref, ("int8", "int8")),
}
