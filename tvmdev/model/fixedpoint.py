"""TFLite's integer requantisation, in Python: what generation derives (the multiplier and
shift of a real scale ratio, as TFLite's ``QuantizeMultiplier``) and what the numpy
reference computes with (the saturating rounding doubling high multiply, the rounding
right shift, and their composition ``MultiplyByQuantizedMultiplier``), element for element
as gemmlowp and TFLite's ``common.h`` define them (double rounding: TFLite's default, the
one TFLM's reference kernels and its Python package are built with).

The C side is ``runtime/kernels/portable/tvmk_fixedpoint.h``; the tests hold the two
against each other and both against hand-derived values. The numpy functions take and
return int64 arrays (holding int32 values), so no step overflows silently.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def tflite_round(x: float) -> int:
    """``std::round``: halves away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: ``real`` as ``multiplier * 2**(shift - 31)``, the
    multiplier an int32 in [2**30, 2**31) (0 for 0), the shift in [-31, 30]."""
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):
        raise ValueError(f"quantize_multiplier: {real} is not finite")
    q, shift = math.frexp(real)
    q_fixed = tflite_round(q * (1 << 31))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:  # beyond what MultiplyByQuantizedMultiplier's left shift can take
        raise ValueError(f"quantize_multiplier: {real} is too large (shift {shift} > 30)")
    return q_fixed, shift


def saturating_rounding_doubling_high_mul(a: np.ndarray | int, b: np.ndarray | int
                                          ) -> np.ndarray:
    """gemmlowp's ``SaturatingRoundingDoublingHighMul`` of int32 values: the high 32 bits
    of ``2 * a * b``, rounded to nearest with ties up (gemmlowp's nudge, then C's
    truncating division: 1.5 -> 2, -1.5 -> -1), INT32_MIN * INT32_MIN saturating to
    INT32_MAX."""
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    overflow = (a64 == b64) & (a64 == INT32_MIN)
    # a * b fits int64 for int32 operands; the nudge and C's truncating division follow.
    ab = a64 * b64
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    total = ab + nudge
    high = np.where(total >= 0, total >> 31, -((-total) >> 31))  # C: truncates toward 0
    return np.where(overflow, INT32_MAX, high).astype(np.int64)


def rounding_divide_by_pot(x: np.ndarray | int, exponent: np.ndarray | int) -> np.ndarray:
    """gemmlowp's ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded to nearest, ties
    away from zero (``exponent`` in [0, 31])."""
    x64, e = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    up: np.ndarray = remainder > threshold
    return (x64 >> e) + up.astype(np.int64)


def multiply_by_quantized_multiplier(x: np.ndarray | int, multiplier: np.ndarray | int,
                                     shift: np.ndarray | int) -> np.ndarray:
    """TFLite's ``MultiplyByQuantizedMultiplier``: ``x * multiplier * 2**(shift - 31)``,
    rounded as TFLite rounds it (a left shift first for a positive ``shift``, then the
    doubling high multiply, then a rounding right shift). ``x * 2**shift`` must fit int32,
    as in TFLite; the result wraps as C's int32 would not, so it is checked."""
    s = np.asarray(shift, np.int64)
    left = np.where(s > 0, s, 0)
    right = np.where(s > 0, 0, -s)
    shifted = np.asarray(x, np.int64) << left
    if np.any((shifted < INT32_MIN) | (shifted > INT32_MAX)):
        raise OverflowError("multiply_by_quantized_multiplier: x << shift overflows int32")
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier),
                                  right)


def multiply_by_quantized_multiplier_64(x: np.ndarray | int, multiplier: np.ndarray | int,
                                        shift: np.ndarray | int) -> np.ndarray:
    """TFLite's ``MultiplyByQuantizedMultiplier`` of an int64 accumulator (the 16x8
    kernels' with int64 bias): the multiplier rounded to 16 bits (``(m + 2**15) >> 16``,
    0x7FFF from 0x7FFF0000 up), then ``(x * m16 + 2**(14 - shift)) >> (15 - shift)``.
    TFLite asserts ``|x| < 2**47`` and an int32 result; so does this (OverflowError)."""
    x64 = np.asarray(x, np.int64)
    if np.any((x64 < -(1 << 47)) | (x64 >= (1 << 47))):
        raise OverflowError("an int64 accumulator is beyond TFLite's +-2^47")
    m = np.asarray(multiplier, np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, np.int64)
    result = (x64 * reduced + (np.int64(1) << (total - 1))) >> total
    if np.any((result < INT32_MIN) | (result > INT32_MAX)):
        raise OverflowError("a requantized int64 accumulator does not fit int32")
    return np.asarray(result, np.int64)
