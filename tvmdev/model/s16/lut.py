"""TFLite's int16 lookup tables with interpolation (``LUTPopulate<int16_t>`` and
``LUTLookup`` of int16), computed here at generation time as TFLM's Prepare computes them
in float32: 512 segments over the input's range, each entry the function's value at the
segment's start less half the error its linear interpolation makes at the midpoint, and a
513th entry for the last slope. The int16 softmax's exp and 1/(1 + x) tables are these.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

F32 = np.float32
STEPS = 512
I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1

Fn = Callable[[np.ndarray], np.ndarray]


def exp_f32(x: np.ndarray) -> np.ndarray:
    """``std::exp`` of float32 values: the double exp rounded once to float32."""
    return np.exp(x.astype(np.float64)).astype(F32)


def one_over_one_plus_x(x: np.ndarray) -> np.ndarray:
    """``1.0f / (1.0f + x)`` in float32."""
    return np.asarray(F32(1) / (F32(1) + x.astype(F32)), F32)


def _round(x: np.ndarray) -> np.ndarray:
    """``TfLiteRound`` of float32 values (halves away from zero), kept float32."""
    v = np.asarray(x, F32)
    return (np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)).astype(F32)


def populate(input_scale: float, input_zero_point: int, output_scale: float,
             output_zero_point: int, fn: Fn) -> tuple[int, ...]:
    """``LUTPopulate<int16_t>``'s 513 entries, every step in float32 as TFLM's."""
    si, so = F32(input_scale), F32(output_scale)
    in_min = F32(si * F32(I16_MIN - input_zero_point))
    in_max = F32(si * F32(I16_MAX - input_zero_point))
    out_min = F32(so * F32(I16_MIN - output_zero_point))
    out_max = F32(so * F32(I16_MAX - output_zero_point))
    step = F32(F32(in_max - in_min) / F32(STEPS))
    half = F32(step / F32(2))
    inv = F32(F32(65536) / F32(out_max - out_min))
    i = np.arange(STEPS, dtype=F32)
    start = (in_min + (i * step).astype(F32)).astype(F32)
    val = fn(start)
    mid = fn((start + half).astype(F32))
    nxt = fn((in_min + ((i + F32(1)) * step).astype(F32)).astype(F32))
    sample = _round((val * inv).astype(F32))
    interp = _round((((nxt * inv).astype(F32) + sample).astype(F32) / F32(2)).astype(F32))
    midpoint = _round((mid * inv).astype(F32))
    bias = _round(((interp - midpoint).astype(F32) / F32(2)).astype(F32))
    lut = np.clip((sample - bias).astype(F32), I16_MIN, I16_MAX).astype(np.int64)
    last = np.clip(_round((fn(np.array([in_max], F32)) * inv).astype(F32)), I16_MIN, I16_MAX)
    return tuple(int(v) for v in np.concatenate([lut, last.astype(np.int64)]))


def lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """``LUTLookup`` of int16 values: the segment's entry plus the slope times the low 7
    bits, rounded (``(slope * offset + 64) >> 7``), wrapped to int16 as TFLM's cast."""
    v = np.asarray(value, np.int64)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = lut[index]
    slope = lut[index + 1] - base
    out = base + ((slope * offset + 64) >> 7)
    return np.asarray((out - I16_MIN) % (1 << 16) + I16_MIN, np.int64)
