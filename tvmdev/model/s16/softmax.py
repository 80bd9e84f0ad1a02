"""SOFTMAX of int8 into int16 (TFLM's reference_ops::Softmax with an int16 output: the
int8 algorithm, each output in 1/65536 steps from -32768), as keyword_scrambled's last
layer. The output must be quantized as TFLM demands: scale 1/65536, zero point -32768.
Params are the int8 form's ``tvmk_softmax_s8_params``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..quant import Quant
from ..s8.call import S8Call, S8Op, per_tensor, quant_of, refusing
from ..s8.gemmlowp import exp_on_negative_values, rdbpot, reciprocal, srdhm, wrap32
from ..s8.softmax import (
    ACCUMULATION_INTEGER_BITS,
    SCALED_DIFF_INTEGER_BITS,
    input_radius,
    multiplier_greater_than_one,
)
from ..shapes import Shape, ShapeError, norm_axis, numel

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
            "diff_min": -input_radius(SCALED_DIFF_INTEGER_BITS, shift)}


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


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    shape = c.out_shape or (1,)
    if norm_axis(c.attrs.get("axis", -1), len(shape)) != len(shape) - 1:
        raise ShapeError("an integer softmax is over the last axis (TFLite's)")
    return params(shape, c.attrs.get("beta", 1.0), quant_of(c, 0, "the input"),
                  quant_of(c, -1, "the output"))


@refusing
def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return reference(np.asarray(x[0]), _params(c)).reshape(c.out_shape)


OPS = {"softmax": S8Op("tvmk_softmax_s8_params", _params, _ref, ("int8", "int16"))}
