"""The portable QUANTIZE's rounding without a library call (quantize_int.h's
tvmk_round_half_away, what Armv7E-M builds use in place of newlib's roundf), against the C
library's roundf (TFLM's TfLiteRound), compiled from the header's own text on the host:
every float whose rounding is not itself (|x| < 2^23) on a grid of 2^24 bit patterns,
every halfway value up to 2^23 and its neighbours, and the special values. Equal as
integers, and as floats but for the sign of a zero.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import need_tool

PORTABLE = Path(__file__).resolve().parent.parent / "runtime" / "kernels" / "portable"

PROGRAM = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

FUNCTION

static int same(float x)
{
    const float a = roundf(x), b = tvmk_round_half_away(x);
    if (isnan(a)) {
        return isnan(b);
    }
    return a == b && (fabsf(a) >= 2147483648.0f || (int32_t)a == (int32_t)b);
}

int main(void)
{
    uint64_t checked = 0, bad = 0;
    for (uint64_t u = 0; u < (1ULL << 32); u += 251) { /* 2^24 patterns, all exponents */
        uint32_t bits = (uint32_t)u;
        float x;
        memcpy(&x, &bits, sizeof x);
        checked++;
        bad += !same(x);
    }
    for (int32_t k = -16777216; k <= 16777216; k++) { /* every k / 2 up to 2^23 */
        const float x = (float)k * 0.5f;
        checked++;
        bad += !same(x) || !same(nextafterf(x, 0.0f)) || !same(nextafterf(x, x * 2.0f));
    }
    bad += !same(INFINITY) + !same(-INFINITY) + !same(NAN) + !same(0.0f) + !same(-0.0f);
    printf("%llu %llu\n", (unsigned long long)checked, (unsigned long long)bad);
    return bad != 0;
}
"""


@pytest.mark.slow
def test_round_half_away_is_roundf(tmp_path: Path) -> None:
    need_tool("gcc")
    src = tmp_path / "round.c"
    # the function as quantize_int.h has it (its other includes need generated headers)
    header = (PORTABLE / "quantize_int.h").read_text()
    start = header.index("static inline float tvmk_round_half_away")
    function = header[start:header.index("\n}\n", start) + 3]
    src.write_text(PROGRAM.replace("FUNCTION", function))
    exe = tmp_path / "round"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(PORTABLE),
                    str(src), "-o", str(exe), "-lm"], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    checked, bad = map(int, out.stdout.split())
    assert out.returncode == 0 and bad == 0 and checked > 50_000_000, out.stdout
