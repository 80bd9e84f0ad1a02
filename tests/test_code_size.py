"""The code estimate of `tvmdev aot`'s memory report (issue 24 item 5): measured sizes per
CPU (runtime/kernels/code_bytes.yaml, scripts/measure_code_bytes.py) summed over the
functions the selected kernels reach, plus the executor's fitted base and per-call bytes;
the params arrays exactly. Checked against a real build's ELF, as `tvmdev inspect`
counts it, on a model none of the measurements came from."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result

from tvmdev.errors import TvmdevError
from tvmdev.load.code_bytes import load_code_bytes
from tvmdev.load.schema import validate

# The estimate of executor + kernels + params + constants is within this of the ELF's
# executor + kernels + constants (tvmdev inspect's footprint, text + rodata + data). It
# differs by the C library's helpers the kernels call (memcpy, memset, roundf: counted
# with the kernels here, in "rest" by inspect) and by the executor's per-call bytes,
# fitted over six models.
TOLERANCE = 0.05


def test_every_kernel_reaches_functions_with_sizes() -> None:
    data = load_code_bytes()
    assert {"cortex-m4", "cortex-m55"} <= set(data)
    for core in data.values():
        assert core.kernels and core.executor_base + core.executor_per_call > 0
        for funcs in core.kernels.values():
            assert all(core.functions[f] >= 0 for f in funcs)


def test_a_malformed_entry_is_refused_at_its_line() -> None:
    bad = {"cortex-m4": {"measured_from": ["x"], "executor": {"base": -1, "per_call": 0},
                         "kernels": {}, "functions": {}}}
    with pytest.raises(TvmdevError) as exc:
        validate(bad, "code_bytes", "code_bytes.yaml")
    assert "base" in str(exc.value) and "code_bytes.yaml" in str(exc.value)


def test_kernels_never_measured_are_named_and_the_code_is_at_least_the_floor(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    from conftest import REPO

    from tvmdev.plan.fit import CODE_FLOOR

    r = cli("aot", str(REPO / "examples" / "cnn" / "cnn.yaml"), "--board", "mps2_an386",
            "-o", str(tmp_path / "out"))
    assert r.code == 0, r.err
    plan = json.loads((tmp_path / "out" / "tvmgen_cnn_plan.json").read_text())
    measured = load_code_bytes()["cortex-m4"].kernels
    unmeasured = sorted(k["name"] for k in plan["kernels"] if k["name"] not in measured)
    assert unmeasured  # the float kernels were never measured on the M4
    row = re.search(r"^    code +([\d,]+)  \S+  at least: .*never measured there, not "
                    r"counted: (.*)$", r.out, re.M)
    assert row, r.out
    assert row[2].split(", ") == unmeasured
    assert int(row[1].replace(",", "")) >= CODE_FLOOR
    assert re.search(r"^flash: [\d,]+ bytes at least$", r.out, re.M)


def _figure(text: str, what: str) -> int:
    m = re.search(rf"^    {what} +([\d,]+)  ", text, re.M)
    assert m, (what, text)
    return int(m[1].replace(",", ""))


def _elf_flash(elf: Path, build: Path) -> int:
    out = subprocess.run([sys.executable, "-m", "tvmdev", "inspect", str(elf), "--model",
                          str(build), "--json"], capture_output=True, text=True, check=True)
    fp = json.loads(out.stdout)["footprint"]
    return sum(int(fp.get(c, {}).get(s, 0)) for c in ("executor", "kernels", "constants")
               for s in ("text", "rodata", "data"))


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
def test_the_estimate_matches_a_build(cli: Callable[..., Result], tmp_path: Path,
                                      board: str) -> None:
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    if not tree:
        pytest.skip("no CMSIS-NN tree (CMSIS_NN_SOURCE_DIR): its kernels were measured")
    from cm_cases import Dw, merged

    # depthwise 3x3 and 5x5, and a first convolution: tvmdev_cm's kernels on the M4, on
    # the M55 CMSIS-NN's depthwise and tvmdev_cm's general convolution; not one of the
    # models the sizes were measured on
    tflite, _ = merged([Dw(9, 9, 16, 3, 1), Dw(9, 9, 16, 5, 2), Dw(9, 9, 3, 3, 2, conv=8)])
    model = tmp_path / "held_out.tflite"
    model.write_bytes(tflite)
    aot = cli("aot", str(model), "--board", board, "--cmsis-nn", tree, "-o",
              str(tmp_path / "aot"))
    assert aot.code == 0, aot.err
    assert "never measured" not in aot.out and "at least" not in aot.out, aot.out
    estimate = sum(_figure(aot.out, w) for w in ("constants", "params", "code"))
    build = tmp_path / "build"
    run = cli("run", str(model), "--board", board, "--cmsis-nn", tree, "--build-dir",
              str(build))
    assert run.code == 0 and "PASS" in run.out, run.out + run.err
    real = _elf_flash(next(build.glob("*.elf")), build)
    print(f"{board}: estimate {estimate:,}, build {real:,} ({estimate / real - 1:+.2%})")
    assert abs(estimate - real) <= TOLERANCE * real, (estimate, real, aot.out)
