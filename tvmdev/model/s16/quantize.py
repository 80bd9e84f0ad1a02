"""int16 quantize, dequantize and reshape, as TFLM computes them (quantize_common,
dequantize): float32 -> int16 is ``AffineQuantize`` (``round(x / scale) + zero_point``,
the division in float32, halves away from zero, clamped to int16); int8, int16 or int32
-> int8, int16 or int32 (the pairs TFLM takes that involve int16 or int32) is
``Requantize``: ``MultiplyByQuantizedMultiplier(q - input_zero_point) + zero_point`` with
the multiplier and shift of input_scale / output_scale (in double), clamped to the
output's dtype; int16 -> float32 is ``(q - zero_point) * scale``. Params are
``tvmk_quantize_s8_params`` (``tvmk_s8.h``), as the int8 forms'. RESHAPE and TRANSPOSE of
int16 copy the values (TFLM's transpose checks only the dtypes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..s8.call import S8Call, S8Op, per_tensor
from ..s8.quantize import round_half_away
from ..shapes import ShapeError, numel, transpose_params

RANGE = {"int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
         "int32": (-(1 << 31), (1 << 31) - 1)}
# The (input, output) dtypes of an int16 quantize (TFLM's Requantize pairs with an int16
# side, and int32 -> int16), besides float32 -> int16.
REQUANTIZE = {("int16", "int8"), ("int8", "int16"), ("int16", "int16"),
              ("int16", "int32"), ("int32", "int16")}


def _quantize_params(c: S8Call) -> dict[str, Any]:
    scale, zp = per_tensor(c.out_quant, "the output of quantize")
    p = {"count": numel(c.out_shape), "scale": scale, "zero_point": zp,
         "input_zero_point": 0, "multiplier": 0, "shift": 0}
    src, dst = c.dtypes[0], c.dtypes[-1]
    if src == "float32":
        if dst != "int16":
            raise ShapeError(f"int16 quantize: float32 to {dst}; TFLM quantizes float32 to "
                             "int8 or int16")
        return p
    if (src, dst) not in REQUANTIZE:
        raise ShapeError(f"quantize {src} to {dst}: TFLM requantizes int16 to int8, int16 "
                         "or int32, and int8 or int32 to int16")
    s_in, zp_in = per_tensor(c.quants[0], "the input of quantize")
    try:
        mult, shift = quantize_multiplier(float(s_in) / float(scale))
    except ValueError as exc:
        raise ShapeError(f"quantize: the requantization scale: {exc}") from None
    lo, hi = RANGE[str(src)]
    span = max(hi - zp_in, zp_in - lo)
    if src != "int32" and shift > 0 and (span << shift) > RANGE["int32"][1]:
        # TFLM shifts (q - zero point) left by it in int32, which then overflows.
        raise ShapeError(f"requantizing {src} by {float(s_in) / float(scale):g} (input scale "
                         "/ output scale) overflows TFLM's int32 arithmetic")
    p.update(input_zero_point=zp_in, multiplier=mult, shift=shift)
    return p


def _quantize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _quantize_params(c)
    v = x[0]
    assert v is not None
    dst = str(c.dtypes[-1])
    lo, hi = RANGE[dst]
    if c.dtypes[0] == "float32":
        with np.errstate(all="ignore"):
            r = round_half_away(np.asarray(v, np.float32) / np.float32(p["scale"]))
            q = np.where(np.isnan(r), lo, np.clip(np.nan_to_num(r, posinf=1e12, neginf=-1e12)
                                                  + p["zero_point"], lo, hi))
        return q.astype(np.int16)
    d = np.asarray(v, np.int64) - p["input_zero_point"]
    if np.any((d < RANGE["int32"][0]) | (d > RANGE["int32"][1])):
        raise OverflowError("q - input zero point overflows int32")
    y = multiply_by_quantized_multiplier(d, p["multiplier"], p["shift"]) + p["zero_point"]
    return np.asarray(np.clip(y, lo, hi), np.dtype(dst))


def _dequantize_params(c: S8Call) -> dict[str, Any]:
    scale, zp = per_tensor(c.quants[0], "the input of dequantize")
    return {"count": numel(c.out_shape), "scale": scale, "zero_point": zp,
            "input_zero_point": 0, "multiplier": 0, "shift": 0}


def _dequantize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    scale, zp = per_tensor(c.quants[0], "the input of dequantize")
    v = x[0]
    assert v is not None
    return np.asarray((np.asarray(v, np.int32) - zp).astype(np.float32) * np.float32(scale))


def _transpose_params(c: S8Call) -> dict[str, Any]:
    return transpose_params(c.shapes, c.out_shape, c.attrs)


def _transpose_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return np.transpose(np.asarray(v), c.attrs.get("perm")).astype(np.int16)


def _reshape_params(c: S8Call) -> dict[str, Any]:
    return {"count": numel(c.out_shape)}


def _reshape_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return np.asarray(v).reshape(c.out_shape)


OPS = {
    "quantize": S8Op("tvmk_quantize_s8_params", _quantize_params, _quantize_ref,
                     ("float32|int8|int16|int32", "int8|int16|int32")),
    "dequantize": S8Op("tvmk_quantize_s8_params", _dequantize_params, _dequantize_ref,
                       ("int16", "float32")),
    "reshape": S8Op("tvmk_unary_params", _reshape_params, _reshape_ref, ("int16", "int16")),
    "flatten": S8Op("tvmk_unary_params", _reshape_params, _reshape_ref, ("int16", "int16")),
    "transpose": S8Op("tvmk_transpose_params", _transpose_params, _transpose_ref,
                      ("int16", "int16")),
}
