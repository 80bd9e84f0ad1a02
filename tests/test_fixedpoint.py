"""TFLite's integer requantisation (tvmdev/model/fixedpoint.py and its C twin
runtime/kernels/portable/tvmk_fixedpoint.h): hand-derived values, then the C functions and
the numpy ones against each other on the edges and on 200,000 seeded random operands."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, need_tool, run_ok

from tvmdev.model.fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    tflite_round,
)

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]


def test_quantize_multiplier_by_hand() -> None:
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(0.25) == (1 << 30, -1)
    assert quantize_multiplier(0.75) == (3 << 29, 0)
    # q * 2^31 rounds up to 2^31: halved, and the shift goes up by one.
    assert quantize_multiplier(1 - 2.0 ** -40) == (1 << 30, 1)
    # Below 2^-32 the multiplier is 0, as in TFLite (shift < -31).
    assert quantize_multiplier(2.0 ** -40) == (0, 0)
    with pytest.raises(ValueError):
        quantize_multiplier(2.0 ** 31)


def test_quantize_multiplier_is_the_real_value() -> None:
    rng = np.random.default_rng(3)
    for real in np.exp(rng.uniform(math.log(1e-9), math.log(1e3), 2000)):
        m, shift = quantize_multiplier(float(real))
        assert (1 << 30) <= m < (1 << 31)
        assert abs(m * 2.0 ** (shift - 31) - real) <= real * 2.0 ** -31


def test_rounding_by_hand() -> None:
    assert tflite_round(2.5) == 3 and tflite_round(-2.5) == -3 and tflite_round(0.49) == 0
    cases = {(5, 1): 3, (-5, 1): -3, (4, 1): 2, (-4, 1): -2, (7, 2): 2, (-6, 2): -2,
             (-7, 2): -2, (INT32_MAX, 31): 1, (INT32_MIN, 31): -1, (123, 0): 123}
    for (x, e), want in cases.items():
        assert int(rounding_divide_by_pot(x, e)) == want, (x, e)
    assert int(saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN)) == INT32_MAX
    assert int(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30)) == 1 << 29
    assert int(saturating_rounding_doubling_high_mul(-1, 1 << 30)) == 0
    # Ties go up (gemmlowp's nudge): 1.5 -> 2, -1.5 -> -1; -1.75 -> -2.
    assert int(saturating_rounding_doubling_high_mul(3, 1 << 30)) == 2
    assert int(saturating_rounding_doubling_high_mul(-3, 1 << 30)) == -1
    assert int(saturating_rounding_doubling_high_mul(-7, 1 << 29)) == -2
    # 100 * 0.75 = 75; 100 * 0.3 = 30; -100 * 0.3 = -30.
    assert int(multiply_by_quantized_multiplier(100, *quantize_multiplier(0.75))) == 75
    assert int(multiply_by_quantized_multiplier(100, *quantize_multiplier(0.3))) == 30
    assert int(multiply_by_quantized_multiplier(-100, *quantize_multiplier(0.3))) == -30
    assert int(multiply_by_quantized_multiplier(3, *quantize_multiplier(4.0))) == 12
    with pytest.raises(OverflowError):
        multiply_by_quantized_multiplier(1 << 30, 1 << 30, 2)


DRIVER = r"""
#include <stdio.h>
#include "tvmk_fixedpoint.h"
int main(void) {
    int32_t v[3];
    while (fread(v, sizeof v, 1, stdin) == 1) {
        int32_t out[3] = {tvmk_srdhm(v[0], v[1]),
                          tvmk_rounding_divide_by_pot(v[0], (int)((uint32_t)v[2] % 32u)),
                          tvmk_multiply_by_quantized_multiplier(v[0] >> 8, v[1],
                                                                (int)(v[2] % 8))};
        fwrite(out, sizeof out, 1, stdout);
    }
    return 0;
}
"""


@pytest.mark.slow
def test_c_matches_numpy(tmp_path: Path) -> None:
    gcc = need_tool("gcc", "apt install gcc")
    src = tmp_path / "fp.c"
    src.write_text(DRIVER)
    exe = tmp_path / "fp"
    run_ok([gcc, *STRICT, "-I", str(REPO / "runtime/kernels/portable"), str(src), "-o",
            str(exe)])
    rng = np.random.default_rng(5)
    n = 200_000
    edges = np.array([INT32_MIN, INT32_MIN + 1, -(1 << 30), -1, 0, 1, 1 << 30, INT32_MAX],
                     np.int64)
    a = np.concatenate([np.repeat(edges, len(edges)),
                        rng.integers(INT32_MIN, INT32_MAX, n, endpoint=True)])
    b = np.concatenate([np.tile(edges, len(edges)),
                        rng.integers(INT32_MIN, INT32_MAX, n, endpoint=True)])
    c = rng.integers(INT32_MIN, INT32_MAX, len(a), endpoint=True)
    data = np.stack([a, b, c], axis=1).astype("<i4").tobytes()
    out = subprocess.run([str(exe)], input=data, capture_output=True, check=True).stdout
    got = np.frombuffer(out, "<i4").reshape(-1, 3).astype(np.int64)
    np.testing.assert_array_equal(got[:, 0], saturating_rounding_doubling_high_mul(a, b))
    np.testing.assert_array_equal(got[:, 1], rounding_divide_by_pot(a, (c & 0xFFFFFFFF) % 32))
    # C's % of a negative value keeps its sign: a negative shift (a right shift).
    shift = np.fmod(c, 8)
    np.testing.assert_array_equal(got[:, 2],
                                  multiply_by_quantized_multiplier(a >> 8, b, shift))
