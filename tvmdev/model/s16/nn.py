"""int16 (16x8) fully_connected, conv2d and depthwise_conv2d, as TFLM's reference integer
kernels compute them with an int64 bias (``FullyConnected``, ``ConvPerChannel`` and
``DepthwiseConvPerChannel`` of int16 input, int8 weights and int64 bias): the products
of int16 activations and int8 weights accumulate in int64 with the bias, and the sum is
requantized by the int64 ``MultiplyByQuantizedMultiplier`` (a multiplier rounded to 16
bits), then clamped to int16 and the fused activation's range. conv2d and fully_connected
with an int32 bias are TFLM's int32-accumulator variant: the int32 requantization.

conv2d and depthwise_conv2d read no zero point (TFLM's 16x8 kernels have no offsets),
so tvmdev refuses a nonzero one, which they would ignore; fully_connected adds the
offsets as its int8 form does. Params are the int8 forms' structs (``tvmk_s8.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_64,
)
from ..s8 import nn as s8nn
from ..s8.call import CArray, S8Call, S8Op, activation_range, per_tensor
from ..shapes import ShapeError

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


def refuse_zero_points(c: S8Call, op: str) -> None:
    """TFLM's 16x8 conv kernels have no input or output offset: refuse a zero point they
    would ignore."""
    for i, what in ((0, "input"), (-1, "output")):
        _, zp = per_tensor(c.quants[i], f"the {what} of {op}")
        if zp != 0:
            raise ShapeError(f"int16 {op}: the {what}'s zero point is {zp}; TFLite's 16x8 "
                             "scheme has symmetric int16 activations (zero point 0), and "
                             "TFLM's kernels ignore any other")


def with_int16_range(c: S8Call, p: dict[str, Any]) -> dict[str, Any]:
    """``p`` with the int16 activation range of the op's fused activation; refuses a
    requantization the int64 ``MultiplyByQuantizedMultiplier`` cannot take (TFLite
    asserts shifts below 8: input_scale * weight_scale / output_scale < 128)."""
    shifts = [v for k in ("output_shift", "channel_shift") if k in p
              for v in (p[k].values if isinstance(p[k], CArray) else (p[k] or 0,))]
    if max(shifts, default=0) > 7:
        raise ShapeError("int16 (16x8): input_scale * weight_scale / output_scale is 128 or "
                         "more, beyond TFLite's int64 requantization")
    s_out, zp_out = per_tensor(c.out_quant, "the output")
    lo, hi = activation_range(c.attrs.get("activation", "NONE"), s_out, zp_out,
                              I16_MIN, I16_MAX)
    return {**p, "activation_min": lo, "activation_max": hi}


def _conv_params(c: S8Call) -> dict[str, Any]:
    refuse_zero_points(c, "conv2d")
    return with_int16_range(c, s8nn.OPS["conv2d"].params(c))


def _depthwise_params(c: S8Call) -> dict[str, Any]:
    refuse_zero_points(c, "depthwise_conv2d")
    return with_int16_range(c, s8nn.OPS["depthwise_conv2d"].params(c))


def _fc_params(c: S8Call) -> dict[str, Any]:
    return with_int16_range(c, s8nn.OPS["fully_connected"].params(c))


def _requantize(acc: np.ndarray, mult: Any, shift: Any, p: dict[str, Any], bias32: bool
                ) -> np.ndarray:
    """The accumulators requantized: by the int64 MultiplyByQuantizedMultiplier, or with an
    int32 bias (TFLM's int32-accumulator variant) by the int32 one, the sum checked to fit
    int32 as TFLM's arithmetic needs."""
    if bias32:
        if np.any((acc < INT32_MIN) | (acc > INT32_MAX)):
            raise OverflowError("a 16x8 accumulator with an int32 bias overflows int32")
        y = multiply_by_quantized_multiplier(acc, mult, shift) + p["output_offset"]
    else:
        y = multiply_by_quantized_multiplier_64(acc, mult, shift) + p["output_offset"]
    return np.asarray(np.clip(y, p["activation_min"], p["activation_max"]), np.int16)


def _channel(p: dict[str, Any], mult: str, shift: str) -> tuple[Any, Any]:
    m, s = p[mult], p[shift]
    if isinstance(m, CArray) and isinstance(s, CArray):
        return np.asarray(m.values, np.int64), np.asarray(s.values, np.int64)
    return m, s


def _fc_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _fc_params(c)
    xv, w, b = x[0], x[1], x[2] if len(x) > 2 else None
    assert xv is not None and w is not None
    rows = np.asarray(xv, np.int64).reshape(p["batch"], p["in_size"]) + p["input_offset"]
    acc = rows @ (np.asarray(w, np.int64) + p["weights_offset"]).T
    if b is not None:
        acc = acc + np.asarray(b, np.int64)
    if isinstance(p["channel_multiplier"], CArray):
        mult, shift = _channel(p, "channel_multiplier", "channel_shift")
    else:
        mult, shift = p["output_multiplier"], p["output_shift"]
    return _requantize(acc, mult, shift, p, c.dtypes[2] == "int32").reshape(c.out_shape)


def _conv_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _conv_params(c)
    xv, w = x[0], x[1]
    assert xv is not None and w is not None
    g, m = p["group"], p["M"]
    mg, cg = m // g, p["C"] // g
    wv = np.asarray(w, np.int64).reshape(m, p["KH"], p["KW"], cg)
    acc = np.zeros((p["N"], p["OH"], p["OW"], m), np.int64)
    for ky, kx, (oy, ox), patch in s8nn.patches(p, xv):
        for k in range(g):
            acc[:, oy, ox, k * mg:(k + 1) * mg] += (patch[..., k * cg:(k + 1) * cg]
                                                    @ wv[k * mg:(k + 1) * mg, ky, kx, :].T)
    return finish(c, p, acc, x[2] if len(x) > 2 else None)


def _depthwise_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _depthwise_params(c)
    xv, w = x[0], x[1]
    assert xv is not None and w is not None
    wv = np.asarray(w, np.int64)[0]
    acc = np.zeros((p["N"], p["OH"], p["OW"], p["C"] * p["mult"]), np.int64)
    for ky, kx, (oy, ox), patch in s8nn.patches(p, xv):
        acc[:, oy, ox, :] += np.repeat(patch, p["mult"], axis=3) * wv[ky, kx, :]
    return finish(c, p, acc, x[2] if len(x) > 2 else None)


def finish(c: S8Call, p: dict[str, Any], acc: np.ndarray, b: np.ndarray | None
            ) -> np.ndarray:
    """The int64 sums of a 16x8 conv with its bias added, requantized per output channel
    and clamped, in the output's shape."""
    if b is not None:
        acc = acc + np.asarray(b, np.int64)
    mult, shift = _channel(p, "output_multiplier", "output_shift")
    return _requantize(acc, mult, shift, p, c.dtypes[2] == "int32").reshape(c.out_shape)


OPS = {
    "conv2d": S8Op("tvmk_conv2d_s8_params", _conv_params, _conv_ref,
                   ("int16", "int8", "int64|int32", "int16"), scratch=True),
    "depthwise_conv2d": S8Op("tvmk_depthwise_conv2d_s8_params", _depthwise_params,
                             _depthwise_ref, ("int16", "int8", "int64", "int16"),
                             scratch=True),
    "fully_connected": S8Op("tvmk_fully_connected_s8_params", _fc_params, _fc_ref,
                            ("int16", "int8", "int64|int32", "int16"), scratch=True),
}
