"""Firmware that runs: every example on the emulated Cortex-M3 (mps2_an385), Cortex-M4
(mps2_an386), Cortex-M7 (mps2_an500) and Cortex-M55 (mps3_an547) boards, checked against
the numpy reference, inspected for heap use, device API completeness and selective build,
and fault injection in Cortex-M3 firmware.

Tolerance: float32 outputs must satisfy |c - r| <= 1e-5 + 1e-4 * |r| against the float64
numpy reference rounded to float32 (ATOL, RTOL), as on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool

from tvmdev.inspect import elf
from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model import reference
from tvmdev.model.scratch import Tuning
from tvmdev.run.compare import ATOL, RTOL
from tvmdev.run.job import execute, prepare

pytestmark = pytest.mark.slow  # firmware under qemu-system-arm

EXAMPLES = sorted((REPO / "examples").glob("*/*.yaml"))
IDS = [p.parent.name for p in EXAMPLES]
BOARDS = ["mps2_an385", "mps2_an386", "mps2_an500", "mps3_an547"]


def _tools() -> None:
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_example_runs_on_board(path: Path, board: str, cli: Callable[..., Result],
                               tmp_path: Path) -> None:
    _tools()
    build = tmp_path / "b"
    r = cli("run", str(path), "--board", board, "--schedule", "lazy", "--build-dir",
            str(build), "--save-outputs", str(tmp_path / "outs"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    m = load_model(path)
    ref = reference.evaluate(m, reference.random_inputs(m))
    for name in m.outputs:
        got = np.load(tmp_path / "outs" / f"{name}.npy")
        np.testing.assert_allclose(got, ref[name], rtol=RTOL, atol=ATOL)
    # The firmware: no heap, all six device functions, exactly the selected kernels.
    report = elf.inspect(build / f"{m.name}.elf", build)
    assert report.machine == "EM_ARM"
    assert report.heap == []
    assert report.missing_device_functions == []
    assert report.kernels_present == report.kernels_expected
    assert report.ok


FAULTS = {"activate": (1, -21), "open": (2, -22), "operator": (2, -23), "close": (1, -24),
          "deactivate": (2, -25)}


@pytest.mark.parametrize("fn", sorted(FAULTS))
def test_fault_injection_on_cortex_m3(fn: str, tmp_path: Path) -> None:
    _tools()
    m = load_model(REPO / "examples/mlp/mlp.yaml")
    prep = prepare(m, board_by_name("mps2_an385"), tmp_path / "b", "eager")
    nth, code = FAULTS[fn]
    prep.backend.build(prep, fault=f"{fn}:{nth}:{code}")
    res = execute(prep)
    assert res.status == code
    assert res.balanced() == [], res.devices
    for name, c in res.devices.items():
        assert c["open"] == c["close"] and c["activate"] == c["deactivate"], (name, c)


def test_kernels_are_compiled_as_their_scratch_was_planned(tmp_path: Path) -> None:
    """The board's tuning sizes the scratch and compiles gemm.c (-DTVMK_GEMM_MR=4 ...)."""
    _tools()
    board = board_by_name("mps2_an385")
    prep = prepare(load_model(REPO / "examples/mlp/mlp.yaml"), board, tmp_path / "b")
    assert prep.compiled.tuning == board.tuning == Tuning(4, 4, 64, 4096)
    prep.backend.build(prep)
    cmd = (tmp_path / "b/build.cmd").read_text().split()
    assert {"-DTVMK_GEMM_MR=4", "-DTVMK_GEMM_NR=4", "-DTVMK_GEMM_KC=64"} <= set(cmd)


def test_missing_qemu_is_one_clear_error(cli: Callable[..., Result], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--board", "mps2_an385",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1
    assert r.err.splitlines()[0] == ("tvmdev: arm-none-eabi-gcc is not installed (needed "
                                     "for board mps2_an385)")


def test_list_boards(cli: Callable[..., Result]) -> None:
    r = cli("list", "boards")
    names = [line.split()[0] for line in r.out.splitlines()]
    assert names == sorted(names)
    assert {"host", "mps2_an385", "mps2_an386", "mps2_an500", "mps3_an547",
            "linux_aarch64"} <= set(names)
    for machine in ("mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547"):
        assert f"qemu-system-arm -M {machine}" in r.out
