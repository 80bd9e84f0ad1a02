"""The integer primitives the signal ops share: the most significant bit, integer
square roots, the fixed-point natural log and PCAN's gain curve, each elementwise on
numpy arrays with C's unsigned wraparound made explicit."""

from __future__ import annotations

import math

import numpy as np

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1


def msb(x: np.ndarray) -> np.ndarray:
    """The position of the highest set bit plus one (bit_length); 32 for 0, as TFLM's
    MostSignificantBit32 gives with GCC's __builtin_clz (its 64-bit twin gives 64)."""
    v = np.asarray(x, dtype=np.uint64)
    out = np.zeros(v.shape, np.int64)
    rest = v.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        big = rest >= np.uint64(1 << shift)
        out += np.where(big, shift, 0)
        rest = np.where(big, rest >> np.uint64(shift), rest)
    out += (rest > 0).astype(np.int64)
    return np.where(v == 0, 32, out)


def _isqrt_rounded(v: np.ndarray, cap: int) -> np.ndarray:
    """floor(sqrt(v)) plus one when the remainder v - floor**2 exceeds floor (TFLM's
    digit-by-digit root rounds so), unless floor is ``cap``; as uint64."""
    out = []
    for a in (int(e) for e in np.asarray(v, np.uint64).ravel()):
        r = math.isqrt(a)
        out.append(r + 1 if a - r * r > r and r != cap else r)
    return np.array(out, np.uint64).reshape(np.shape(v))


def sqrt64(x: np.ndarray) -> np.ndarray:
    """TFLM's Sqrt64: the rounded integer square root of a uint64 (of a value below
    2**32, the 16-bit routine's, capped at 0xFFFF), as uint32."""
    v = np.asarray(x, np.uint64)
    small = v < np.uint64(1 << 32)
    lo = _isqrt_rounded(np.where(small, v, np.uint64(0)), 0xFFFF)
    hi = _isqrt_rounded(np.where(small, np.uint64(0), v), U32)
    return np.where(small, lo, hi).astype(np.uint32)


def log_lut() -> list[int]:
    """The log2 correction table: 65536 * (log2(1 + i/128) - i/128), rounded, for i in
    0..128, and a trailing 0 (the interpolation reads one past the last segment)."""
    lut = [int(math.floor(65536 * (math.log2(1 + i / 128) - i / 128) + 0.5))
           for i in range(129)]
    return lut + [0]


_LOG_LUT = np.array(log_lut(), np.int64)
LOG_COEFF = 45426  # 65536 * ln(2), rounded


def log32(x: np.ndarray, out_scale: int) -> np.ndarray:
    """TFLM's Log32: ``out_scale`` * ln(x) in Q16, rounded, for uint32 x > 1 (int64
    array of the uint32 results)."""
    v = np.asarray(x, np.int64)
    integer = msb(v) - 1
    frac = v - (np.int64(1) << integer)  # below 2**31: fits the int32 C holds it in
    frac = np.where(integer < 16, frac << np.maximum(16 - integer, 0),
                    frac >> np.maximum(integer - 16, 0))
    frac = _wrap_s32(frac)
    seg = (frac & U32) >> 9
    c0, c1 = _LOG_LUT[seg], _LOG_LUT[seg + 1]
    rel = _wrap_s32((c1 - c0) * (frac - 512 * seg)) >> 16
    fraction = (frac + c0 + rel) & U32
    log2 = ((integer << 16) + fraction) & U32
    loge = ((LOG_COEFF * log2 + 32768) >> 16) & U32
    scaled: np.ndarray = ((((out_scale & U32) * loge) & U32) + 32768) & U32
    return scaled >> 16


def _wrap_s32(v: np.ndarray) -> np.ndarray:
    """int64 values taken modulo 2**32 into int32's range, as C stores them."""
    return ((np.asarray(v, np.int64) + (1 << 31)) & U32) - (1 << 31)


def wide_dynamic(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """PCAN's gain for noise estimate ``x`` (uint32): piecewise quadratic in the int16
    ``lut`` (three coefficients per octave), as int16 values in int64."""
    v = np.asarray(x, np.int64)
    table = np.asarray(lut, np.int64)
    interval = msb(v)
    base = np.clip(4 * interval - 6, 0, len(table) - 3)
    frac = np.where(interval < 11, v << np.maximum(11 - interval, 0),
                    v >> np.maximum(interval - 11, 0)) & 0x3FF
    result = _wrap_s32(table[base + 2] * frac) >> 5
    result = _wrap_s32(result + ((table[base + 1] << 5) & U32))
    result = _wrap_s32(result * frac)
    result = _wrap_s32(result + (1 << 14)) >> 15
    result = _wrap_s32(result + table[base])
    out = ((result + (1 << 15)) & 0xFFFF) - (1 << 15)
    small = np.clip(v, 0, 2)
    return np.where(v <= 2, table[small], out)
