"""int8 LEAKY_RELU and HARD_SWISH, as TFLM's kernels compute them.

LEAKY_RELU (leaky_relu_common Prepare, reference_ops::QuantizeLeakyRelu): the input less
its zero point is requantized by input_scale / output_scale where it is at least 0, by
input_scale * alpha / output_scale below (both ratios computed in float32, as TFLM does;
a negative alpha's multiplier is applied to the magnitude and the result negated).

HARD_SWISH (hard_swish_common Prepare, reference_ops::HardSwish): int16 fixed point. The
input less its zero point, times 128, is scaled to the output (a 16-bit multiplier and an
exponent <= 0) and, separately, into a "relu-ish" factor in [0, 1] (x / 3 saturated, then
moved from [-1, 1] to [0, 1]); their truncating doubling product is shifted to the
output. Params are ``tvmk_leaky_relu_s8_params`` and ``tvmk_hard_swish_s8_params``
(``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..quant import Quant
from ..shapes import numel
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar

F32 = np.float32
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def leaky_relu_params(count: int, alpha: float, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_leaky_relu_s8_params``."""
    (si, zi), (so, zo) = scalar(qin, "the input"), scalar(qout, "the output")
    alpha_mult, alpha_shift = quantize_multiplier(float(F32(F32(si) * F32(alpha)) / F32(so)))
    identity_mult, identity_shift = quantize_multiplier(float(F32(si) / F32(so)))
    if alpha_mult == INT16_MIN << 16:
        raise ValueError(f"alpha {alpha} gives the multiplier -2^31, whose magnitude TFLM "
                         "cannot take")
    return {"count": count, "input_zero_point": zi, "output_zero_point": zo,
            "alpha_multiplier": alpha_mult, "alpha_shift": alpha_shift,
            "identity_multiplier": identity_mult, "identity_shift": identity_shift}


def leaky_relu_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 leaky ReLU of ``x`` with ``leaky_relu_params``' values."""
    v = x.astype(np.int64) - p["input_zero_point"]
    up = multiply_by_quantized_multiplier(np.where(v >= 0, v, 0), p["identity_multiplier"],
                                          p["identity_shift"])
    down = multiply_by_quantized_multiplier(np.where(v < 0, v, 0), abs(p["alpha_multiplier"]),
                                            p["alpha_shift"])
    down = -down if p["alpha_multiplier"] < 0 else down
    out = p["output_zero_point"] + np.where(v >= 0, up, down)
    return np.asarray(np.clip(out, -128, 127), np.int8)


def _int16_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier`` then ``DownScaleInt32ToInt16Multiplier``."""
    mult, exponent = quantize_multiplier(real)
    if mult >= (1 << 31) - 1 - (1 << 15):
        return INT16_MAX, exponent
    return (mult + (1 << 15)) >> 16, exponent


def hard_swish_params(count: int, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_hard_swish_s8_params``; TFLM refuses an output scale below the input's /
    128 (an output exponent above 0)."""
    (si, zi), (so, zo) = scalar(qin, "the input"), scalar(qout, "the output")
    hires = F32(1.0 / 128.0) * F32(si)
    out_mult, out_exp = _int16_multiplier(float(hires / F32(so)))
    if out_exp > 0:
        raise ValueError(f"the output scale {so} is below the input's ({si}) / 128: TFLM "
                         "refuses it")
    relu_mult, relu_exp = _int16_multiplier(float(hires / (F32(3.0) / F32(32768.0))))
    return {"count": count, "input_zero_point": zi, "output_zero_point": zo,
            "reluish_multiplier": relu_mult, "reluish_exponent": relu_exp,
            "output_multiplier": out_mult, "output_exponent": out_exp}


def _high_mul16(a: np.ndarray, b: np.ndarray | int, rounding: bool = True) -> np.ndarray:
    """The high half of 2 * a * b for int16 values: gemmlowp's
    SaturatingRoundingDoublingHighMul (``rounding``), or TFLite's truncating
    SaturatingDoublingHighMul; -2^15 * -2^15 saturates."""
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a64 * b64
    if rounding:
        ab = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    high = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))  # C: truncates toward 0
    return np.where((a64 == b64) & (a64 == INT16_MIN), INT16_MAX, high)


def _rdbpot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT on int16 values, its mask an int16 (all ones for an
    exponent of 16 or more: then 1 for x >= 0 and -1 below, as TFLM computes it)."""
    mask = (1 << exponent) - 1 if exponent < 16 else -1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def _shl16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.asarray(np.clip(x * (1 << amount), INT16_MIN, INT16_MAX))


def hard_swish_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 hard swish of ``x`` with ``hard_swish_params``' values."""
    hires = (x.astype(np.int64) - p["input_zero_point"]) * 128
    scaled = _high_mul16(hires, p["output_multiplier"])
    relu, e = hires, p["reluish_exponent"]
    if e > 0:
        relu = _shl16(relu, e - 1)
    relu = _high_mul16(relu, p["reluish_multiplier"])
    if e > 0:
        relu = _shl16(relu, 1)
    if e < 0:
        relu = _rdbpot16(relu, -e)
    relu = (relu + (1 << 15)) >> 1
    out = _rdbpot16(_high_mul16(relu, scaled, rounding=False), -p["output_exponent"])
    out = (out + p["output_zero_point"] - INT16_MIN) % (1 << 16) + INT16_MIN  # int16 wraps
    return np.asarray(np.clip(out, -128, 127), np.int8)


@refusing
def _leaky_params(c: S8Call) -> dict[str, Any]:
    return leaky_relu_params(numel(c.out_shape), c.attrs["alpha"],
                             quant_of(c, 0, "the input"), quant_of(c, -1, "the output"))


@refusing
def _leaky_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return leaky_relu_reference(np.asarray(x[0]), _leaky_params(c)).reshape(c.out_shape)


@refusing
def _swish_params(c: S8Call) -> dict[str, Any]:
    return hard_swish_params(numel(c.out_shape), quant_of(c, 0, "the input"),
                             quant_of(c, -1, "the output"))


@refusing
def _swish_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return hard_swish_reference(np.asarray(x[0]), _swish_params(c)).reshape(c.out_shape)


OPS = {
    "leaky_relu": S8Op("tvmk_leaky_relu_s8_params", _leaky_params, _leaky_ref,
                       ("int8", "int8")),
    "hard_swish": S8Op("tvmk_hard_swish_s8_params", _swish_params, _swish_ref,
                       ("int8", "int8")),
}
