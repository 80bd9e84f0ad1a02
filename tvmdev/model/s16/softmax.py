"""SOFTMAX into int16, as TFLM computes it.

Of int8 (reference_ops::Softmax with an int16 output: the int8 algorithm, each output in
1/65536 steps from -32768), as keyword_scrambled's last layer; the output quantized as
TFLM demands (1/65536, -32768).

Of int16 (reference_ops::SoftmaxInt16): each difference from the row's maximum scaled so
that [-65535, 0] is [-10, 0] (input_multiplier, input_left_shift), its exp from a 513-entry
table with interpolation (:mod:`.lut`), the sum's reciprocal from a 1/(1 + x) table, the
output in 1/32768 steps (TFLM demands scale 1/32768 and zero points 0).

Params: ``tvmk_softmax_s16_params`` (``tvmk_s16.h``), the int8 form's fields and the two
tables as static arrays (NULL for int8 input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..quant import Quant
from ..s8.call import CArray, S8Call, S8Op, per_tensor, quant_of, refusing
from ..s8.gemmlowp import exp_on_negative_values, rdbpot, reciprocal, srdhm, wrap32
from ..s8.softmax import (
    ACCUMULATION_INTEGER_BITS,
    SCALED_DIFF_INTEGER_BITS,
    input_radius,
    multiplier_greater_than_one,
)
from ..shapes import Shape, ShapeError, norm_axis, numel
from . import lut

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


def params(shape: Shape, beta: float, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_softmax_s8_params`` of an int8 -> int16 softmax over the last axis."""
    si, _ = per_tensor(qin, "the input")
    so, zo = per_tensor(qout, "the output")
    # TFLM: TF_LITE_ENSURE_NEAR(scale, 1/65536, 0.001/65536) and zero point -32768.
    if abs(so - 1.0 / 65536) > 0.001 / 65536 or zo != I16_MIN:
        raise ValueError(f"an int8 softmax's int16 output must have scale 1/65536 and zero "
                         f"point -32768 (TFLM refuses others), got {so} and {zo}")
    real = min(float(np.float32(beta)) * si * (1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               (1 << 31) - 1.0)
    if real <= 1.0:
        raise ValueError(f"beta * input scale ({beta} * {si}) is too small for TFLite's "
                         "int8 softmax (TFLM aborts)")
    mult, shift = multiplier_greater_than_one(real)
    depth = shape[-1] if shape else 1
    return {"outer": numel(shape) // depth if depth else 0, "depth": depth,
            "input_multiplier": mult, "input_left_shift": shift,
            "diff_min": -input_radius(SCALED_DIFF_INTEGER_BITS, shift),
            "exp_lut": None, "one_over_one_plus_x_lut": None}  # NULL: int8's algorithm


def reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 -> int16 softmax over the last axis of ``x`` with ``params``' values."""
    rows = x.reshape(-1, p["depth"]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    live = diff >= p["diff_min"]
    safe = np.where(live, diff, 0)
    rescaled = srdhm(safe << p["input_left_shift"], p["input_multiplier"])
    exps = exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS)
    terms = np.where(live, rdbpot(exps, ACCUMULATION_INTEGER_BITS), 0)
    total = wrap32(terms.sum(axis=1, keepdims=True))
    scale, bits_over_unit = reciprocal(total, ACCUMULATION_INTEGER_BITS)
    exponent = bits_over_unit + 31 - 16
    out = rdbpot(srdhm(scale, exps), exponent) + I16_MIN
    out = np.where(live, np.clip(out, I16_MIN, I16_MAX), I16_MIN)
    return out.astype(np.int16).reshape(x.shape)


def params16(shape: Shape, beta: float, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_softmax_s16_params`` of an int16 -> int16 softmax over the last axis."""
    si, zi = per_tensor(qin, "the input")
    so, zo = per_tensor(qout, "the output")
    if zi != 0 or zo != 0 or abs(so - 1.0 / 32768) > 0.001 / 32768:
        raise ValueError(f"an int16 softmax needs zero points 0 and the output scale 1/32768 "
                         f"(TFLM refuses others), got {zi}, {zo} and {so}")
    mult, shift = quantize_multiplier(float(si) * float(np.float32(beta)) / (10.0 / 65535.0))
    depth = shape[-1] if shape else 1
    span = (1 << 16) - 1
    return {"outer": numel(shape) // depth if depth else 0, "depth": depth,
            "input_multiplier": mult, "input_left_shift": shift, "diff_min": 0,
            "exp_lut": CArray("int16_t", lut.populate(10.0 / span, I16_MAX, 2.0 / span, 0,
                                                      lut.exp_f32)),
            "one_over_one_plus_x_lut": CArray("int16_t", lut.populate(
                1.0 / span, I16_MIN, 2.0 / span, 0, lut.one_over_one_plus_x))}


def reference16(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int16 -> int16 softmax over the last axis of ``x`` with ``params16``' values."""
    exp_lut = np.asarray(p["exp_lut"].values, np.int64)
    inv_lut = np.asarray(p["one_over_one_plus_x_lut"].values, np.int64)
    rows = x.reshape(-1, p["depth"]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, p["input_multiplier"],
                                              p["input_left_shift"])
    exps = lut.lookup(np.clip(scaled + I16_MAX, I16_MIN, I16_MAX), exp_lut)
    total = exps.sum(axis=1, keepdims=True)
    if np.any(total <= 0) or np.any(total >= 1 << 31):
        raise ValueError("a row's sum of exps is beyond TFLM's int32 arithmetic")
    headroom = 32 - np.floor(np.log2(total.astype(np.float64))).astype(np.int64) - 1
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    recip = lut.lookup(np.clip(shifted - ((1 << 15) + (1 << 16)), I16_MIN, I16_MAX), inv_lut)
    right = 31 - headroom
    out = (exps * recip + (np.int64(1) << (right - 1))) >> right
    return np.asarray(np.clip(out, 0, I16_MAX), np.int16).reshape(x.shape)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    shape = c.out_shape or (1,)
    if norm_axis(c.attrs.get("axis", -1), len(shape)) != len(shape) - 1:
        raise ShapeError("an integer softmax is over the last axis (TFLite's)")
    make = params16 if c.dtypes[0] == "int16" else params
    return make(shape, c.attrs.get("beta", 1.0), quant_of(c, 0, "the input"),
                quant_of(c, -1, "the output"))


@refusing
def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    ref = reference16 if c.dtypes[0] == "int16" else reference
    return ref(np.asarray(x[0]), _params(c)).reshape(c.out_shape)


OPS = {"softmax": S8Op("tvmk_softmax_s16_params", _params, _ref, ("int8|int16", "int16"))}
