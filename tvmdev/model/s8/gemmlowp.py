"""gemmlowp's fixed-point transcendental functions, in numpy, as TFLite's int8 softmax,
logistic and tanh call them: ``exp_on_negative_values``, ``one_over_one_plus_x_for_x_in_0_1``,
``logistic``, ``tanh``, and TFLite's ``GetReciprocal``.

A fixed-point value here is an int32 raw value held in an int64 array, with a number of
integer bits that is part of the function (Q``ib``.``31 - ib``); gemmlowp's ``a * b`` of
two such values is the saturating rounding doubling high multiply of their raw values,
``a + b`` wraps as int32, ``Rescale`` is a saturating left shift or a rounding right
shift. Every step is written from gemmlowp's definitions, element for element; the C twin
is ``runtime/kernels/portable/tvmk_fixedpoint_math.h``.
"""

from __future__ import annotations

import numpy as np

from ..fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)

srdhm = saturating_rounding_doubling_high_mul
rdbpot = rounding_divide_by_pot

# exp(-1/8) and 1/3 in Q0.31; 48/17 and -32/17 in Q2.29 (gemmlowp's constants).
_EXP_MINUS_ONE_EIGHTH = 1895147668
_ONE_THIRD = 715827883
_C48_OVER_17 = 1515870810
_CNEG32_OVER_17 = -1010580540
# exp(-2**e) in Q0.31 for the barrel shifter of exp_on_negative_values.
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def wrap32(x: np.ndarray | int) -> np.ndarray:
    """``x`` reduced to int32 as two's complement arithmetic wraps it."""
    return (np.asarray(x, np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)


def saturating_shift_left(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp's ``SaturatingRoundingMultiplyByPOT`` for a positive exponent."""
    threshold = (1 << (31 - exponent)) - 1
    x = np.asarray(x, np.int64)
    out = np.where(x > threshold, INT32_MAX, x << exponent)
    return np.where(x < -threshold, INT32_MIN, out)


def rounding_half_sum(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp's ``RoundingHalfSum`` of int32 values: (a + b) / 2, halves away from 0."""
    total = np.asarray(a, np.int64) + np.asarray(b, np.int64)
    num = total + np.where(total >= 0, 1, -1)
    return np.where(num >= 0, num // 2, -((-num) // 2))  # C: truncates toward 0


def _exp_quarter(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out (a Taylor expansion around -1/8)."""
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap32(srdhm(wrap32(x4_over_4 + x3), _ONE_THIRD) + x2), 1)
    c = _EXP_MINUS_ONE_EIGHTH
    return wrap32(c + srdhm(c, wrap32(x + poly)))


def exp_on_negative_values(a: np.ndarray | int, integer_bits: int) -> np.ndarray:
    """exp(a) in Q0.31 for a <= 0 in Q``integer_bits`` (4 or 5, as TFLite uses it)."""
    if not 0 <= integer_bits <= 5:
        raise ValueError("exp_on_negative_values: integer_bits must be in [0, 5]")
    a = np.asarray(a, np.int64)
    frac = 31 - integer_bits
    quarter = 1 << (frac - 2)
    a_mod = wrap32((a & (quarter - 1)) - quarter)
    result = _exp_quarter(saturating_shift_left(a_mod, integer_bits)
                          if integer_bits else a_mod)
    remainder = wrap32(a_mod - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = (remainder >> (frac + exponent)) & 1
            result = np.where(bit != 0, srdhm(result, multiplier), result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal(half_denominator: np.ndarray) -> np.ndarray:
    """1 / half_denominator in Q2.29 (three Newton-Raphson steps from 48/17 - 32/17 d)."""
    one = 1 << 29
    x = wrap32(_C48_OVER_17 + srdhm(half_denominator, _CNEG32_OVER_17))
    for _ in range(3):
        one_minus = wrap32(one - srdhm(half_denominator, x))
        x = wrap32(x + saturating_shift_left(srdhm(x, one_minus), 2))
    return x


def one_over_one_plus_x(a: np.ndarray | int) -> np.ndarray:
    """1 / (1 + a) in Q0.31 for a in [0, 1) in Q0.31."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    return saturating_shift_left(_newton_reciprocal(half_denominator), 1)


def one_minus_x_over_one_plus_x(a: np.ndarray | int) -> np.ndarray:
    """(1 - a) / (1 + a) in Q0.31 for a in [0, 1) in Q0.31."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    return saturating_shift_left(wrap32(_newton_reciprocal(half_denominator) - (1 << 29)), 2)


def logistic(a: np.ndarray | int, integer_bits: int) -> np.ndarray:
    """1 / (1 + exp(-a)) in Q0.31 for any a in Q``integer_bits``."""
    a = np.asarray(a, np.int64)
    positive = a > 0
    magnitude = np.where(positive, a, wrap32(-a))
    if_positive = one_over_one_plus_x(exp_on_negative_values(wrap32(-magnitude),
                                                             integer_bits))
    if_negative = wrap32(INT32_MAX - if_positive)
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, if_negative))


def tanh(a: np.ndarray | int, integer_bits: int) -> np.ndarray:
    """tanh(a) in Q0.31 for any a in Q``integer_bits``: (1 - exp(-2|a|)) / (1 + exp(-2|a|))
    (the doubling is a change of format: the raw value read with one more integer bit)."""
    a = np.asarray(a, np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap32(-a))
    t = one_minus_x_over_one_plus_x(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, wrap32(-t), t))


def count_leading_zeros32(x: np.ndarray | int) -> np.ndarray:
    """The leading zero bits of ``x`` as a uint32 (32 for 0)."""
    u = np.asarray(x, np.int64) & 0xFFFFFFFF
    bits = np.zeros(u.shape, np.int64)
    for b in range(32):
        bits = np.where(u >= (np.int64(1) << b), b + 1, bits)
    return 32 - bits


def reciprocal(x: np.ndarray | int, integer_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's ``GetReciprocal``: for x > 0 in Q``integer_bits``, 1 / x as a Q0.31 value
    and the number of bits it is shifted by (``num_bits_over_unit``)."""
    x = np.asarray(x, np.int64)
    headroom = count_leading_zeros32(x)
    bits_over_unit = integer_bits - headroom
    shifted_minus_one = wrap32(((x & 0xFFFFFFFF) << headroom) - (1 << 31))
    return one_over_one_plus_x(shifted_minus_one), bits_over_unit


# log(2), sqrt(sqrt(1/2)), sqrt(1/2) in Q0.31 and the constants of the log's rational
# approximation (TFLite's log_x_for_x_greater_than_or_equal_to_1_impl).
_LOG_2, _SQRT_SQRT_HALF, _SQRT_HALF = 1488522236, 1805811301, 1518500250
_ALPHA_N, _ALPHA_D, _ALPHA_I, _ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def _shift_left_saturating(x: np.ndarray | int, exponent: np.ndarray | int) -> np.ndarray:
    """TFLite's ``SaturatingRoundingMultiplyByPOTParam`` for exponents in [0, 31] (one
    per element)."""
    x, e = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    threshold = (np.int64(1) << (31 - e)) - 1
    out = np.where(x > threshold, INT32_MAX, x << e)
    return np.where(x < -threshold, INT32_MIN, out)


def _saturated(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(x, INT32_MIN, INT32_MAX))


def log_x_ge_1(a: np.ndarray | int, integer_bits: int, out_bits: int) -> np.ndarray:
    """log(a) for a >= 1 in Q``integer_bits``, in Q``out_bits`` (TFLite's
    ``log_x_for_x_greater_than_or_equal_to_1``): a = 2**z * r with r in [sqrt(1/2), 1]
    picked from two normalizations, log(r) by a rational function of r, z * log(2)
    added in Q``out_bits + 1``."""
    acc_bits = out_bits + 1
    a = np.asarray(a, np.int64)
    quarter = rdbpot(1 << 29, acc_bits)
    head_a = count_leading_zeros32(a)
    r_a = _shift_left_saturating(srdhm(_shift_left_saturating(a, head_a - 1), _SQRT_HALF), 1)
    z_a = _saturated(_shift_left_saturating(integer_bits - head_a, 31 - acc_bits) + quarter)
    head_b = count_leading_zeros32(srdhm(a, _SQRT_HALF)) - 1
    r_b = _shift_left_saturating(a, head_b)
    z_b = _saturated(_shift_left_saturating(integer_bits - head_b, 31 - acc_bits) - quarter)
    r, z = np.minimum(r_a, r_b), np.maximum(z_a, z_b)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = wrap32(2 * wrap32(r - _SQRT_SQRT_HALF))
    sq = srdhm(q, q)
    num = wrap32(srdhm(q, r) + srdhm(srdhm(q, sq), _ALPHA_N))
    denom = wrap32(srdhm(p, wrap32(wrap32(_ALPHA_I + q) + srdhm(_ALPHA_D, sq)))
                   + srdhm(_ALPHA_F, q))
    total = wrap32(srdhm(z, _LOG_2) + srdhm(rdbpot(num, acc_bits), one_over_one_plus_x(denom)))
    return _shift_left_saturating(total, acc_bits - out_bits)
