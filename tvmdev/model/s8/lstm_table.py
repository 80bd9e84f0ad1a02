"""The 256-entry table of sigmoid(i / 24) in 0.16 fixed point that TFLM's int16 logistic
and tanh (and CMSIS-NN's ``arm_nn_activation_s16``) interpolate, and those two
interpolations (the int8 LSTM's gates and the int16 LOGISTIC and TANH use them). Its
entries are tuned, not a plain rounding of the function (44 of them differ from one), so
tvmdev does not recompute it and does not ship a copy: it reads it from the third-party
tree that defines it, TFLM's (``TFLM_SOURCE_DIR``) or CMSIS-NN's
(``CMSIS_NN_SOURCE_DIR``; the same 256 values), and a model that needs it is refused in
one line without either."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import numpy as np

from ..shapes import ShapeError

# Where each tree defines the table.
SOURCES = (("TFLM_SOURCE_DIR", "tensorflow/lite/kernels/internal/common.h"),
           ("CMSIS_NN_SOURCE_DIR", "Source/NNSupportFunctions/arm_nntables.c"))
_DEFINITION = re.compile(r"sigmoid_table_uint16\[256\]\s*=\s*\{([^}]*)\}")


def _read(path: Path) -> tuple[int, ...] | None:
    try:
        found = _DEFINITION.search(path.read_text(errors="replace"))
    except OSError:
        return None
    if found is None:
        return None
    values = tuple(int(v) for v in re.findall(r"\d+", found.group(1)))
    ok = len(values) == 256 and values[0] == 1 << 15 and all(
        a <= b < 1 << 16 for a, b in zip(values, values[1:], strict=False))
    return values if ok else None


@functools.cache
def _found(tflm: str | None, cmsis_nn: str | None) -> tuple[int, ...] | None:
    for root, (_, rel) in zip((tflm, cmsis_nn), SOURCES, strict=True):
        if root:
            values = _read(Path(root) / rel)
            if values is not None:
                return values
    return None


def sigmoid_table(who: str = "the int8 lstm") -> tuple[int, ...]:
    """The table, from the first tree that defines it; ShapeError naming ``who`` needs
    it without one."""
    values = _found(*(os.environ.get(var) for var, _ in SOURCES))
    if values is None:
        raise ShapeError(f"{who} needs TFLM's int16 sigmoid table, read from TFLM's "
                         "tree (set TFLM_SOURCE_DIR) or CMSIS-NN's (CMSIS_NN_SOURCE_DIR)")
    return values


def scaled(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """``(x * multiplier + round) >> shift``: the input rescaled for the table, 2**-12 / 3
    a step (TFLM's int16 logistic and tanh; ``round`` is half of ``1 << shift``)."""
    v = np.asarray(x, np.int64) * multiplier
    return (v + ((1 << (shift - 1)) if shift > 0 else 0)) >> shift


def _lut(v: np.ndarray, frac_bits: int, who: str) -> np.ndarray:
    """The table's sigmoid of |v| (v's low ``frac_bits`` bits interpolated), in units of
    2**-(16 + frac_bits); -1 where it saturates."""
    table = np.asarray(sigmoid_table(who), np.int64)
    a = np.abs(v)
    uh = np.minimum(a >> frac_bits, 254)
    ua, ub = table[uh], table[uh + 1]
    res = (ua << frac_bits) + (a & ((1 << frac_bits) - 1)) * (ub - ua)
    return np.where((a >> frac_bits) >= 255, -1, res)


def sigmoid_of_scaled(v: np.ndarray, who: str) -> np.ndarray:
    """TFLM's int16 logistic of ``v`` (:func:`scaled`'s) into Q0.15, in [1, 32767]."""
    r = _lut(v, 9, who)
    r = np.where(r < 0, 0x7FFF << 10, r)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    out: np.ndarray = r >> 10
    return out


def tanh_of_scaled(v: np.ndarray, who: str) -> np.ndarray:
    """TFLM's int16 tanh of ``v`` (:func:`scaled`'s) into Q0.15, in [-32767, 32767]:
    2 sigmoid(2v) - 1, the doubling one fractional bit fewer into the table."""
    r = _lut(v, 8, who)
    r = np.where(r < 0, 0xFFFF << 8, r)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    out: np.ndarray = r >> 8
    return out
