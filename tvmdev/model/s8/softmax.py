"""int8 SOFTMAX over the last axis, TFLM's algorithm (softmax_common Prepare and
reference_ops::Softmax for int8 in and out): each input's difference from its row's
maximum, scaled by beta * input_scale into Q5.26 (input_multiplier, input_left_shift),
gemmlowp's exp_on_negative_values, the sum of the exps in Q12.19, its reciprocal
(GetReciprocal) and each output as exp / sum in 1/256 steps from -128. Differences below
diff_min contribute nothing and give -128. The output must be quantized as TFLM demands:
scale 1/256, zero point -128. Params are ``tvmk_softmax_s8_params`` (``tvmk_s8_ops.h``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..fixedpoint import quantize_multiplier
from ..quant import Quant
from ..shapes import Shape, ShapeError, norm_axis, numel
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar
from .gemmlowp import exp_on_negative_values, rdbpot, reciprocal, srdhm, wrap32

SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12


def multiplier_greater_than_one(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplierGreaterThanOne``, shifts up to 31 included (a
    multiplier capped at 2**31 - 1 takes 31; quantize_multiplier stops at 30: the
    multiplier of real / 2 is the same, one shift lower)."""
    if real >= 2.0 ** 30:
        mult, shift = quantize_multiplier(real / 2.0)
        return mult, shift + 1
    return quantize_multiplier(real)


def input_radius(integer_bits: int, left_shift: int, total_bits: int = 31) -> int:
    """TFLite's ``CalculateInputRadius``: the largest input difference whose rescaled
    value still fits."""
    return math.floor(((1 << integer_bits) - 1) * (1 << (total_bits - integer_bits))
                      / (1 << left_shift))


def params(shape: Shape, beta: float, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_softmax_s8_params`` for a softmax over the last axis of ``shape``."""
    si, _ = scalar(qin, "the input")
    so, zo = scalar(qout, "the output")
    # TFLM: TF_LITE_ENSURE_NEAR(scale, 1/256, 0.001/256), then computes in 1/256 steps.
    if abs(so - 1.0 / 256) > 0.001 / 256 or zo != -128:
        raise ValueError(f"an int8 softmax output must have scale 1/256 and zero point "
                         f"-128 (TFLM refuses others), got {so} and {zo}")
    real = min(float(np.float32(beta)) * si * (1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               (1 << 31) - 1.0)
    if real <= 1.0:  # QuantizeMultiplierGreaterThanOne's TFLITE_CHECK
        raise ValueError(f"beta * input scale ({beta} * {si}) is too small for TFLite's "
                         "int8 softmax (TFLM aborts)")
    mult, shift = multiplier_greater_than_one(real)
    depth = shape[-1] if shape else 1
    return {"outer": numel(shape) // depth if depth else 0, "depth": depth,
            "input_multiplier": mult, "input_left_shift": shift,
            "diff_min": -input_radius(SCALED_DIFF_INTEGER_BITS, shift)}


def reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 softmax over the last axis of ``x`` with ``params``' values."""
    rows = x.reshape(-1, p["depth"]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    live = diff >= p["diff_min"]
    safe = np.where(live, diff, 0)
    rescaled = srdhm(safe << p["input_left_shift"], p["input_multiplier"])
    exps = exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS)
    terms = np.where(live, rdbpot(exps, ACCUMULATION_INTEGER_BITS), 0)
    total = wrap32(terms.sum(axis=1, keepdims=True))
    scale, bits_over_unit = reciprocal(total, ACCUMULATION_INTEGER_BITS)
    exponent = bits_over_unit + 31 - 8
    if np.any(exponent > 31):
        raise ValueError("a row's sum of exps reaches 512: TFLM's int8 softmax aborts "
                         "(the check on the output's rounding exponent)")
    out = rdbpot(srdhm(scale, exps), exponent) - 128
    out = np.where(live, np.clip(out, -128, 127), -128)
    return out.astype(np.int8).reshape(x.shape)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    shape = c.out_shape or (1,)
    if norm_axis(c.attrs.get("axis", -1), len(shape)) != len(shape) - 1:
        raise ShapeError("an int8 softmax is over the last axis (TFLite's)")
    return params(shape, c.attrs.get("beta", 1.0), quant_of(c, 0, "the input"),
                  quant_of(c, -1, "the output"))


@refusing
def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return reference(np.asarray(x[0]), _params(c)).reshape(c.out_shape)


OPS = {"softmax": S8Op("tvmk_softmax_s8_params", _params, _ref, ("int8", "int8"))}
