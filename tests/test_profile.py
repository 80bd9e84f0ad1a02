"""benchmarks/_profile.py, the breakdown of cmsis_nn_bench.py --profile: its block count of
a firmware's run call against Unicorn's per-instruction count of the same call
(_cortex_m3_emu.run_firmware, exact=True), and its per-operator split against the
executor's kernel calls in the generated C."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_module, need_tool

BENCH = REPO / "benchmarks"


def test_instruction_classes() -> None:
    sys.path.insert(0, str(BENCH))
    from _profile import instruction_class, library, operator_kind

    assert [instruction_class(m) for m in ("smlad", "smlabb", "smlaldx", "mla", "smmulr",
                                           "smull", "smlal", "mul", "smulbb", "ssat",
                                           "sxtb16", "pkhbt", "ldr.w", "ldmia.w", "pop",
                                           "strb", "push", "bne.n", "bl", "cbz", "adds",
                                           "sub.w", "bic")] == [
        "mac", "mac", "mac", "mac", "long", "long", "long", "mul", "mul", "sat", "widen",
        "widen", "load", "load", "load", "store", "store", "branch", "branch", "branch",
        "other", "other", "other"]
    assert [library(n) for n in ("tvmk_cm_dw_3x3_s1", "arm_convolve_s8",
                                 "tvmk_cmsis_nn_add_s8", "tvmk_mean_s8", "tvmgen_m_run",
                                 "memcpy", "__aeabi_ldivmod", "main")] == [
        "tvmdev_cm", "cmsis_nn", "cmsis_nn", "portable", "executor", "libc", "libc",
        "harness"]
    assert operator_kind("tvmk_cmsis_nn_depthwise_conv2d_s8") == "depthwise"
    assert operator_kind("_ZN6tflite12_GLOBAL__N_18EvalInt8 conv") == "conv"


@pytest.mark.slow
def test_profile_counts_the_call_as_unicorn_does(cli: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    need_tool("arm-none-eabi-gcc")
    need_tool("arm-none-eabi-objdump")
    need_module("unicorn", "pip install unicorn")
    from cm_cases import Dw, merged

    # a depthwise and a first convolution: tvmdev_cm's kernels on the M4
    model = tmp_path / "m.tflite"
    model.write_bytes(merged([Dw(9, 9, 16, 3, 1), Dw(9, 9, 3, 3, 2, conv=8)])[0])
    r = cli("run", str(model), "--board", "mps2_an386", "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    sys.path.insert(0, str(BENCH))
    import _cortex_m3_emu as emu
    from _profile import profile

    elf = tmp_path / "b" / "m.elf"
    got = profile(elf, "tvmgen_m_run", "tvmgen_m_run_with_workspace")
    exact = emu.run_firmware(elf, "tvmgen_m_run", exact=True, failed=True,
                             cpu="cortex-m4")
    assert got.fault is None and exact.fault is None
    # every block counted whole (a predicated PC write's early exit is the difference)
    assert abs(got.total - exact.instructions) <= 0.001 * exact.instructions, (
        got.total, exact.instructions)
    assert sum(got.by_operator.values()) == sum(got.by_library.values()) == got.total
    assert sum(got.by_class.values()) == got.total
    source = (tmp_path / "b" / "model" / "tvmgen_m.c").read_text()
    called = re.findall(r"\bret = (tvmk_\w+)\(", source)
    assert sum(got.calls.values()) == len(called)
    assert set(got.calls) == set(called)
