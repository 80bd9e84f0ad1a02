"""Issue 23's "done when": keyword_spotting through the generated executor on mps2_an386
under RTX5, its convolutions and depthwise convolutions on the UART co-processor (tvmdev's
firmware on a second QEMU, mps3_an547), everything else on CMSIS-NN on the main board.

The device folder is what a user makes: `tvmdev new-device uart_npu --memory ...`, then
examples/uart_npu's sources over the scaffold (examples/uart_npu/README.md). The run is
`tvmdev run ... --coprocessor npu0=mps3_an547`. The outputs are compared with TFLM's
interpreter (tests/tflm_ref.py); the bytes on the link are what the example's driver
counted (frames included), the plan's pool is read from plan.json.

The faults are test_coproc's injection (the co-processor's DEBUG frame, armed through the
harness's tvmdev_before_run hook, which this test appends to its own copy of the driver):
a corrupted answer, a late one, the co-processor exiting mid-inference (the launcher
boots it again). Each returns its code from tvmgen_keyword_spotting_run; the harness's
Destroy then succeeds, which the driver allows only with no Open outstanding and every
Activate deactivated; the harness runs again (TVMDEV_RETRY) and the retry is TFLM's.

Without QEMU, the Arm toolchain, RTX5's trees, TFLM's interpreter or the model, the tests
skip, saying why (under CI the toolchain and QEMU are required: conftest.need_tool).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tflm_ref
from conftest import REPO, Result, need_module, need_tool
from test_int8_devices import tflm_inputs

from tvmdev.frontends.importer import import_file
from tvmdev.load.rtos import load_rtos, missing_trees

pytestmark = pytest.mark.slow  # builds two firmwares and runs two QEMUs

EXAMPLE = REPO / "examples/uart_npu"
MEMORY = "65536:16"
FAULT_BAD_CRC, FAULT_DELAY, FAULT_DIE = 1, 2, 3  # runtime/coproc/protocol.h
# Appended to the test's copy of the driver: arm a fault of the co-processor's next RUN
# before the first run (the DEBUG frame test_coproc uses).
FAULT_HOOK = """
void tvmdev_before_run(uint32_t run, void *devices);
void tvmdev_before_run(uint32_t run, void *devices)
{{
    (void)devices;
    if (run == 0U && link.dev != NULL) {{
        (void)uart_npu_debug_fault(link.dev, {fault}U, {arg}U);
    }}
}}
"""


def _need_everything() -> None:
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    need_module("tflite", "pip install -e '.[tflite]'")
    need_module("tflite_micro", "pip install tflite_micro")
    missing = missing_trees(load_rtos("rtx5"))
    if missing:
        pytest.skip(", ".join(f"{t.env} is not set: the {t.name} tree" for t in missing))


def device_folder(tmp: Path, cli: Callable[..., Result], hook: str = "") -> Path:
    """The user's device folder: new-device's scaffold with the example's sources over it
    (and ``hook`` appended to the driver)."""
    assert cli("new-device", "uart_npu", "--platform", "cmsis", "--rtos", "cmsis-rtos2",
               "--memory", MEMORY, "--ops", "conv2d,depthwise_conv2d", "-o", "dev",
               cwd=tmp).code == 0
    dev = tmp / "dev"
    for src in EXAMPLE.rglob("*"):
        if src.is_file() and src.suffix in (".c", ".h"):
            dst = dev / src.relative_to(EXAMPLE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    if hook:
        driver = dev / "src/device/uart_npu/cmsis.c"
        driver.write_text(driver.read_text() + hook)
    return dev


def run_kws(tmp: Path, cli: Callable[..., Result], tflite_model: Callable[[str], Path],
            *extra: str, hook: str = "", place: bool = True
            ) -> tuple[Result, list[np.ndarray], dict[str, np.ndarray]]:
    """``tvmdev run`` of keyword_spotting, with the device on the co-processor (or, without
    ``place``, all on the main board); TFLM's outputs and the run's."""
    _need_everything()
    path = tflite_model("keyword_spotting.tflite")
    names, xs = tflm_inputs(path, 5)
    (tmp / "in").mkdir()
    for name, x in zip(names, xs, strict=True):
        np.save(tmp / "in" / f"{name}.npy", x)
    args = ["run", str(path), "--board", "mps2_an386", "--rtos", "rtx5",
            "--inputs", str(tmp / "in"), "--save-outputs", str(tmp / "out"),
            "--build-dir", str(tmp / "b"), *extra]
    if place:
        dev = device_folder(tmp, cli, hook)
        args += ["--device", "npu0:uart_npu", "--place", "conv2d,depthwise_conv2d=npu0",
                 "--device-dir", str(dev), "--coprocessor", "npu0=mps3_an547"]
    r = cli(*args)
    outputs = import_file(path).to_model().outputs
    want = tflm_ref.outputs(path.read_bytes(), xs, len(outputs))
    got = {n: np.load(tmp / "out" / f"{n}.npy") for n in outputs
           if (tmp / "out" / f"{n}.npy").is_file()}
    return r, want, got


def bus(out: str) -> list[tuple[int, int, int]]:
    """The driver's counts of each run, as tvmdev run prints them: (status, to, from)."""
    return [(int(m[1]), int(m[2]), int(m[3])) for m in re.finditer(
        r"^  run \d+ status (-?\d+): (\d+) to the device, (\d+) back$", out, re.M)]


def test_keyword_spotting_convolutions_on_the_coprocessor(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path],
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three runs: TFLM's outputs; the weights cross once (the later runs carry the input,
    the jobs and the output only); the plan has npu0's pool."""
    r, want, got = run_kws(tmp_path, cli, tflite_model, "--iterations", "3")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    plan = weights_cross_once(r.out, tmp_path / "b")
    (pool,) = plan["pools"]
    assert plan["copies"]["constants_per_load"] > 0 and pool["size"] <= pool["capacity"]


def weights_cross_once(out: str, build: Path) -> dict[str, Any]:
    """Three runs of keyword_spotting with npu0 on the co-processor (tvmdev run's output
    and build folder): the kernels where they belong, npu0's pool in the plan, and the
    weights on the bus in the first run only; the plan, read back."""
    assert "uart_npu 9 (conv2d 5, depthwise_conv2d 4)" in out
    # the fully connected layer: tvmdev_cm's where the main board lists it (the M4), else
    # CMSIS-NN's (the Cortex-M3 under Zephyr, tests/test_zephyr_coproc.py)
    assert "cmsis_nn 3 (avgpool2d, fully_connected, softmax)" in out or (
        "cmsis_nn 2 (avgpool2d, softmax)" in out and "tvmdev_cm 1 (fully_connected)" in out)
    plan: dict[str, Any] = json.loads(
        (build / "model/tvmgen_keyword_spotting_plan.json").read_text())
    (pool,) = plan["pools"]
    assert pool["device"] == "npu0" and pool["capacity"] == 65536
    constants = plan["copies"]["constants_per_load"]
    counts = bus(out)
    assert [c[0] for c in counts] == [0, 0, 0], out
    first = counts[0][1]
    steady = [c[1] for c in counts[1:]]
    back = [c[2] for c in counts[1:]]
    assert steady[0] == steady[1] and back[0] == back[1], counts
    # The first run carries the weights' bytes on top of a later run's traffic.
    assert first - steady[0] >= constants, (first, steady, constants)
    # A later run: at least the plan's copies each way, with far fewer bytes than the weights.
    assert plan["copies"]["to_devices"] <= steady[0] < constants
    assert plan["copies"]["from_devices"] <= back[0]
    return plan


@pytest.mark.parametrize("fault,arg,code", [
    (FAULT_BAD_CRC, 0, "TVM_DEVICE_ERR_IO"),
    (FAULT_DELAY, 3000, "TVM_DEVICE_ERR_TIMEOUT"),
    (FAULT_DIE, 0, "TVM_DEVICE_ERR_TIMEOUT")],
    ids=["corrupted-answer", "late-answer", "dies-mid-inference"])
def test_a_fault_returns_its_code_and_the_next_run_is_tflms(
        fault: int, arg: int, code: str, cli: Callable[..., Result],
        tflite_model: Callable[[str], Path], tmp_path: Path) -> None:
    r, want, got = run_kws(tmp_path, cli, tflite_model, "--cflags=-DTVMDEV_RETRY=20",
                           hook=FAULT_HOOK.format(fault=fault, arg=arg))
    assert re.search(rf"^  that run returned -\d+ {code}: run again", r.out, re.M), r.out
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "Destroy" not in r.out, r.out  # the harness says when Destroy fails
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    assert bus(r.out)[-1][0] == 0


def test_instructions_with_and_without_offload(cli: Callable[..., Result],
                                               tflite_model: Callable[[str], Path],
                                               tmp_path: Path) -> None:
    """--instructions over two runs, side by side: everything on CMSIS-NN on the M4, and
    the convolutions on the co-processor, where each count splits into the idle thread's
    wait and the CPU's own work (the first run's includes the weights' load)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    local, want, got = run_kws(tmp_path / "a", cli, tflite_model, "--instructions",
                               "--iterations", "2", place=False)
    assert local.code == 0 and "of which the idle thread" not in local.out, local.out
    off, want, got = run_kws(tmp_path / "b", cli, tflite_model, "--instructions",
                             "--iterations", "2")
    assert off.code == 0, off.out
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    alone = [int(n.replace(",", "")) for n in re.findall(
        r"^instructions (?:per inference|in the last run): ([\d,]+)", local.out, re.M)]
    own = [(int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in re.findall(
        r"of which the idle thread waiting: ([\d,]+) .*the CPU's own work: ([\d,]+)$",
        off.out, re.M)]
    assert len(alone) == 2 and len(own) == 2, off.out
    print(f"main board: {alone} instructions alone (first, last run); with the "
          f"co-processor (idle, own work) {own}")
    (idle0, first), (idle1, steady) = own
    assert idle0 > 0 and idle1 > 0
    # The first run also sends the weights; a later run's own work is less than all of it
    # (the first's may not be: the M4 alone runs its 1x1 convolutions on tvmdev_cm).
    assert 0 < steady < first and steady < alone[1]


@pytest.mark.parametrize("given,says", [
    ("npu9=mps3_an547", "no device npu9 in the model (devices: npu0, npu1)"),
    ("npu0=mps3_an547", "device npu0 is not of a --device-dir kind with memory of its own"),
    ("npu0", "expected ID=BOARD")])
def test_coprocessor_refusals(given: str, says: str, cli: Callable[..., Result],
                              tmp_path: Path) -> None:
    """A --coprocessor that names no device of the model, or one tvmdev simulates (mlp's
    npu0), is one line, nothing written."""
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--board", "mps2_an386",
            "--coprocessor", given, "--build-dir", str(tmp_path / "b"))
    assert r.code == 1 and f"tvmdev: --coprocessor {given}: {says}" in r.err, r.err
    assert "Traceback" not in r.err and not (tmp_path / "b").exists(), r.err
