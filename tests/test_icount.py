"""``tvmdev run --instructions``: instructions per inference under QEMU -icount
(runtime/cortex_m/icount.c, tvmdev/run/icount.py, benchmarks/_icount.py).

Fast: the option is refused in one line where it cannot apply, and the firmware without
it is the firmware of before (the counter's code is only added). Slow: the calibration
firmware's loops of exactly known length are counted within one tick on every
qemu-system board, and a model's run call counted by QEMU equals Unicorn's count of the
same call in the same ELF, within one tick (Cortex-M3 and M4; Unicorn has no M55, and
its M7 refuses the FPv5 double-precision code of this float model).
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import pytest
from conftest import need_module, need_tool

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model import reference
from tvmdev.plan.devices import plan_devices
from tvmdev.render.harness import Harness, firmware_files
from tvmdev.run import icount

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "examples" / "mlp" / "mlp.yaml"
BENCH = ROOT / "benchmarks"
QEMU_BOARDS = ("mps2_an385", "mps2_an386", "mps2_an500", "mps3_an547")


@pytest.mark.parametrize("board", ["host", "linux_aarch64", "qemu_cortex_m3"])
def test_refused_where_it_cannot_count(cli, board, tmp_path):
    r = cli("run", str(MLP), "--board", board, "--instructions",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1
    first = r.err.strip().splitlines()[0]
    assert first.startswith("tvmdev: ") and "--instructions" in first
    assert "qemu-system" in first and board in first
    assert "Traceback" not in r.err and not (tmp_path / "b").exists()


def test_every_cortex_m_qemu_board_can_count():
    for name in QEMU_BOARDS:
        assert icount.unsupported(board_by_name(name)) is None, name


def test_ticks_to_instructions():
    # under -icount shift=0 an instruction is 1 ns: a tick of a clock_hz clock is
    # 1e9 / clock_hz of them
    for clock in (25_000_000, 32_000_000):
        per = 1e9 / clock
        for ticks in (0, 1, 7, 2**24 + 3, 10**9):
            assert icount.instructions(clock, ticks) == round(ticks * per)
        assert icount.resolution(clock) >= per > icount.resolution(clock) - 1
    assert icount.ticks("tvmdev: status 0 OK\ntvmdev: icount ticks 123\n") == 123
    assert icount.ticks("tvmdev: status 0 OK\n") is None


def test_firmware_without_the_option_is_unchanged():
    board = board_by_name("mps2_an385")
    model = load_model(MLP)
    dplan = plan_devices(model, board, None)
    inputs = reference.random_inputs(dplan.model)

    def main_c(counting: bool) -> list[str]:
        files = firmware_files(Harness(dplan.model, board, dplan, inputs, "test", counting))
        return next(f.content for f in files if f.path == "main.c").splitlines()

    plain, counting = main_c(False), main_c(True)
    assert "icount" not in "\n".join(plain)
    ops = difflib.SequenceMatcher(a=plain, b=counting, autojunk=False).get_opcodes()
    assert {op[0] for op in ops} == {"equal", "insert"}  # only lines added
    run = next(i for i, ln in enumerate(counting) if "tvmgen_mlp_run(" in ln)
    assert counting[run - 1].strip() == "tvmdev_icount_start();"
    assert counting[run + 1].strip() == "ticks = tvmdev_icount_ticks();"


@pytest.mark.slow
def test_calibration_loops_counted_within_one_tick(tmp_path):
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    sys.path.insert(0, str(BENCH))
    import _icount

    for name in QEMU_BOARDS:
        pairs = _icount.calibrate(name, tmp_path / name)
        res = _icount.resolution(name)
        assert pairs[-1][0] > 2**24 * res  # the longest loop wraps the 24-bit counter
        for exact, counted in pairs:
            assert abs(counted - exact) <= res, (name, exact, counted)


MACS_MLP = 64 * 32 + 32 * 10  # its two gemms


@pytest.mark.slow
@pytest.mark.parametrize("board,cpu", [("mps2_an385", "cortex-m3"),
                                       ("mps2_an386", "cortex-m4")])
def test_run_instructions_equal_unicorn(cli, tmp_path, board, cpu):
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    need_module("unicorn", "pip install unicorn")
    r = cli("run", str(MLP), "--board", board, "--instructions",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    found = re.search(r"^instructions per inference: ([\d,]+) \(QEMU -icount, ±(\d+)\)$",
                      r.out, re.M)
    assert found, r.out
    counted, res = int(found[1].replace(",", "")), int(found[2])
    assert MACS_MLP < counted < 1000 * MACS_MLP  # at least one instruction per MAC
    sys.path.insert(0, str(BENCH))
    import _cortex_m3_emu as emu

    exact = emu.run_firmware(tmp_path / "b" / "mlp.elf", "tvmgen_mlp_run", failed=True,
                             cpu=cpu)
    assert exact.fault is None and exact.exit_status == 0
    # the count between the counter's two reads: the run call and a few instructions
    # of the counter, within one tick of the exact count
    assert abs(counted - exact.instructions) <= res, (counted, exact.instructions)


def test_per_operator_needs_instructions(cli, tmp_path):
    r = cli("run", str(MLP), "--board", "mps2_an386", "--per-operator",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1 and "--per-operator" in r.err and "Traceback" not in r.err
    assert not (tmp_path / "b").exists()


@pytest.mark.slow
def test_per_operator_counts_equal_unicorn(cli, tmp_path):
    """Each operator's count (the executor's TRACE hook recording SysTick under -icount,
    the hooks' own cost taken out) is Unicorn's count of its kernel call in the same ELF,
    plus the executor's few instructions around the call; the rows add up to the run's
    count."""
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    need_module("unicorn", "pip install unicorn")
    r = cli("run", str(MLP), "--board", "mps2_an386", "--instructions", "--per-operator",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    rows = {m[2]: (m[1], int(m[3].replace(",", ""))) for m in re.finditer(
        r"^\s+\d+\s+(\S+)\s+\S+\s+(\S+)\s+([\d,]+)\s+[\d.]+%$", r.out, re.M)}
    total = int(re.search(r"^instructions per inference: ([\d,]+)", r.out, re.M)[1]
                .replace(",", ""))
    summed = int(re.search(r"^  total ([\d,]+)$", r.out, re.M)[1].replace(",", ""))
    sys.path.insert(0, str(BENCH))
    import _profile

    exact = _profile.profile(tmp_path / "b" / "mlp.elf", "tvmgen_mlp_run",
                             "tvmgen_mlp_run_with_workspace", "cortex-m4")
    assert exact.fault is None
    # relu and softmax: one call each, on the portable kernels (no device calls around)
    for kernel in ("tvmk_relu_f32", "tvmk_softmax_f32"):
        assert exact.calls[kernel] == 1
        got = rows[kernel][1]
        assert exact.by_operator[kernel] - 40 <= got <= exact.by_operator[kernel] + 80, (
            kernel, got, exact.by_operator[kernel])
    hooks = exact.by_operator["tvmdev_icount_trace"]
    assert abs(summed - (total - hooks)) <= 40 * (len(rows) + 2), (summed, total, hooks)
    # cmsis_nn_bench's M55 breakdown reads the same table
    import _per_operator

    parsed = _per_operator.parse(r.out)
    assert parsed.total == summed and parsed.measured == total
    assert parsed.by_operator["tvmk_softmax_f32"] == rows["tvmk_softmax_f32"][1]
    assert parsed.by_library["portable"] >= rows["tvmk_relu_f32"][1] + rows[
        "tvmk_softmax_f32"][1]
