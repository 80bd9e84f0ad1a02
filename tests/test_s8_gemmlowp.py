"""gemmlowp's fixed-point functions (tvmdev/model/s8/gemmlowp.py and its C twin
runtime/kernels/portable/tvmk_fixedpoint_math.h): the numpy ones against float math
within their documented precision and at hand-derived points, then the C ones against
the numpy ones bit for bit on seeded random raw values over each function's domain."""

from __future__ import annotations

import math
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, need_tool, run_ok

from tvmdev.model.fixedpoint import INT32_MAX, INT32_MIN
from tvmdev.model.s8 import gemmlowp as g
from tvmdev.model.s8.mean import fold_count

ONE = float(1 << 31)
RNG = np.random.default_rng(1414)


def test_hand_values() -> None:
    assert g.exp_on_negative_values(0, 5) == INT32_MAX
    assert g.logistic(0, 4) == 1 << 30
    assert g.tanh(0, 4) == 0
    assert g.saturating_shift_left(np.array([1 << 29, -(1 << 29), 3]), 2).tolist() == \
        [INT32_MAX, INT32_MIN, 12]
    assert g.rounding_half_sum(3, 4) == 4 and g.rounding_half_sum(-3, -4) == -4
    assert g.count_leading_zeros32(np.array([0, 1, 1 << 31, -1])).tolist() == [32, 31, 0, 0]
    assert g.wrap32(INT32_MAX + 1) == INT32_MIN
    # 1.5 in Q12.19 is 3 << 18: 12 leading zeros, none over unit; 1 / 1.5 in Q0.31.
    recip, bits = g.reciprocal(3 << 18, 12)
    assert bits == 0 and abs(recip / ONE - 2 / 3) < 1e-8
    # 6.0 is 3 << 20: two bits over unit, 1 / (6 / 4).
    recip, bits = g.reciprocal(3 << 20, 12)
    assert bits == 2 and abs(recip / ONE - 2 / 3) < 1e-8


@pytest.mark.parametrize("ib", [4, 5])
def test_exp_accuracy(ib: int) -> None:
    """exp(a) for a <= 0 within 5e-7 (the product of up to eight rounded factors)."""
    a = -RNG.integers(0, 1 << 31, size=20000)
    got = g.exp_on_negative_values(a, ib) / ONE
    want = np.exp(a / float(1 << (31 - ib)))
    assert np.max(np.abs(got - want)) < 5e-7


def test_logistic_tanh_reciprocal_accuracy() -> None:
    a = RNG.integers(-(1 << 31) + 1, 1 << 31, size=20000)
    x = a / float(1 << 27)
    assert np.max(np.abs(g.logistic(a, 4) / ONE - 1 / (1 + np.exp(-x)))) < 1e-6
    assert np.max(np.abs(g.tanh(a, 4) / ONE - np.tanh(x))) < 1e-6
    u = RNG.integers(0, 1 << 31, size=20000)
    assert np.max(np.abs(g.one_over_one_plus_x(u) / ONE - 1 / (1 + u / ONE))) < 1e-7
    assert np.max(np.abs(g.one_minus_x_over_one_plus_x(u) / ONE -
                         (1 - u / ONE) / (1 + u / ONE))) < 1e-7
    s = RNG.integers(1, 1 << 31, size=2000)
    recip, bits = g.reciprocal(s, 12)
    value = s / float(1 << 19)
    assert np.max(np.abs(recip / ONE * 2.0 ** -bits.astype(float) - 1 / value) * value) < 1e-7


def test_fold_count_by_hand() -> None:
    """TFLM's mean requantization: 1 / count folded into multiplier and shift, the lift
    limited to 32 and to 31 + shift."""
    assert fold_count(1 << 30, 0, 4) == (1 << 30, -2)
    assert fold_count(1 << 30, 0, 3) == ((1 << 31) // 3, -1)
    assert fold_count(1 << 30, -28, 64) == (1 << 27, -31)
    assert fold_count(1 << 30, 0, 1) == (1 << 30, 0)
    assert math.isclose(fold_count(1518500250, -3, 49)[0] * 2.0 ** (fold_count(
        1518500250, -3, 49)[1] - 31), 1518500250 * 2.0 ** -34 / 49, rel_tol=1e-8)


C_DRIVER = r"""
#include <stdio.h>
#include "tvmk_fixedpoint_math.h"

int main(void)
{
    int32_t fn, a;
    while (fread(&fn, 4, 1, stdin) == 1 && fread(&a, 4, 1, stdin) == 1) {
        int32_t r[2] = {0, 0};
        int bits = 0;
        switch (fn) {
        case 0: r[0] = tvmk_fp_exp_on_negative_values(a, 4); break;
        case 1: r[0] = tvmk_fp_exp_on_negative_values(a, 5); break;
        case 2: r[0] = tvmk_fp_logistic(a, 4); break;
        case 3: r[0] = tvmk_fp_tanh(a, 4); break;
        case 4: r[0] = tvmk_fp_one_over_one_plus_x(a); break;
        case 5: r[0] = tvmk_fp_one_minus_x_over_one_plus_x(a); break;
        default: r[0] = tvmk_fp_reciprocal(a, 12, &bits); r[1] = bits; break;
        }
        fwrite(r, 4, 2, stdout);
    }
    return 0;
}
"""


def _numpy(fn: int, a: np.ndarray) -> np.ndarray:
    out = np.zeros((a.size, 2), np.int64)
    funcs = [lambda v: g.exp_on_negative_values(v, 4), lambda v: g.exp_on_negative_values(v, 5),
             lambda v: g.logistic(v, 4), lambda v: g.tanh(v, 4), g.one_over_one_plus_x,
             g.one_minus_x_over_one_plus_x]
    if fn < len(funcs):
        out[:, 0] = funcs[fn](a)
    else:
        out[:, 0], out[:, 1] = g.reciprocal(a, 12)
    return out


@pytest.mark.slow
def test_c_matches_numpy(tmp_path: Path) -> None:
    """Each C function equals its numpy twin on 30,000 seeded values of its domain, the
    edges included."""
    gcc = need_tool("gcc", "compiles tvmk_fixedpoint_math.h")
    src = tmp_path / "fp.c"
    src.write_text(C_DRIVER)
    exe = tmp_path / "fp"
    run_ok([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
            f"-I{REPO / 'runtime' / 'kernels' / 'portable'}", str(src), "-o", str(exe)])
    domains = {0: (INT32_MIN, 0), 1: (INT32_MIN, 0), 2: (INT32_MIN + 1, INT32_MAX),
               3: (INT32_MIN + 1, INT32_MAX), 4: (0, INT32_MAX), 5: (0, INT32_MAX),
               6: (1, INT32_MAX)}
    for fn, (lo, hi) in domains.items():
        a = np.concatenate([RNG.integers(lo, hi, size=30000, endpoint=True),
                            [lo, hi, lo + 1, hi - 1, (lo + hi) // 2]])
        blob = b"".join(struct.pack("<ii", fn, int(v)) for v in a)
        proc = subprocess.run([str(exe)], input=blob, capture_output=True, check=True)
        got = np.frombuffer(proc.stdout, np.int32).reshape(-1, 2).astype(np.int64)
        np.testing.assert_array_equal(got, _numpy(fn, a), err_msg=f"function {fn}")
