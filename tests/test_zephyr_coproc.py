"""Issue 23's "done when" under Zephyr: keyword_spotting in zephyr_app on qemu_cortex_m3
(QEMU's lm3s6965evb), its convolutions and depthwise convolutions on tvmdev's UART
co-processor (runtime/coproc's firmware on a second QEMU, mps3_an547), joined UART1 to
UART1 as on mps2_an386 (tests/test_coprun.py), everything else on CMSIS-NN.

The device folder is what a user makes: `tvmdev new-device uart_npu --platform zephyr
--zephyr-driver --memory ...`, then examples/uart_npu's kernels and header and
examples/uart_npu_zephyr's device file and driver over the scaffold. The outputs are
compared with TFLM's interpreter; the bytes on the link are the driver's counts. The
faults are test_coprun's (the co-processor's DEBUG frame, armed before the first run
through the app's tvmdev_before_run hook): each returns its code, Destroy then succeeds
(the app says when it does not), and the run done again (TVMDEV_RETRY) is TFLM's.

These need a Zephyr tree (ZEPHYR_BASE) and skip without it, saying why.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import REPO, Result, need_module, need_tool
from test_coprun import (
    FAULT_BAD_CRC,
    FAULT_DELAY,
    FAULT_DIE,
    FAULT_HOOK,
    MEMORY,
    bus,
    weights_cross_once,
)
from test_int8_devices import tflm_inputs

from tvmdev.frontends.importer import import_file

pytestmark = [pytest.mark.slow,  # a west build, the co-processor's firmware, two QEMUs
              pytest.mark.skipif(not os.environ.get("ZEPHYR_BASE"),
                                 reason="ZEPHYR_BASE is not set: the Zephyr tests need a "
                                        "Zephyr tree (3.4 or newer; see the README)")]

EXAMPLES = (REPO / "examples/uart_npu", REPO / "examples/uart_npu_zephyr")


def device_folder(tmp: Path, cli: Callable[..., Result], hook: str = "") -> Path:
    """new-device's Zephyr scaffold with the examples' sources over it (the CMSIS device
    file left out), and ``hook`` appended to the device file."""
    assert cli("new-device", "uart_npu", "--platform", "zephyr", "--zephyr-driver",
               "--memory", MEMORY, "--ops", "conv2d,depthwise_conv2d", "-o", "dev",
               cwd=tmp).code == 0
    dev = tmp / "dev"
    for example in EXAMPLES:
        for src in example.rglob("*"):
            if src.is_file() and src.suffix in (".c", ".h") and src.name != "cmsis.c":
                dst = dev / src.relative_to(example)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
    if hook:
        driver = dev / "src/device/uart_npu/zephyr.c"
        driver.write_text(driver.read_text() + hook)
    return dev


def run_kws(tmp: Path, cli: Callable[..., Result], tflite_model: Callable[[str], Path],
            *extra: str, hook: str = "") -> tuple[Result, list[np.ndarray],
                                                  dict[str, np.ndarray]]:
    """``tvmdev run`` of keyword_spotting on qemu_cortex_m3 with npu0 on the co-processor;
    TFLM's outputs and the run's."""
    need_tool("west", "pip install west")
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    need_module("tflite", "pip install -e '.[tflite]'")
    need_module("tflite_micro", "pip install tflite_micro")
    path = tflite_model("keyword_spotting.tflite")
    names, xs = tflm_inputs(path, 5)
    (tmp / "in").mkdir()
    for name, x in zip(names, xs, strict=True):
        np.save(tmp / "in" / f"{name}.npy", x)
    dev = device_folder(tmp, cli, hook)
    r = cli("run", str(path), "--board", "qemu_cortex_m3", "--device", "npu0:uart_npu",
            "--place", "conv2d,depthwise_conv2d=npu0", "--device-dir", str(dev),
            "--coprocessor", "npu0=mps3_an547", "--inputs", str(tmp / "in"),
            "--save-outputs", str(tmp / "out"), "--build-dir", str(tmp / "b"), *extra)
    outputs = import_file(path).to_model().outputs
    want = tflm_ref.outputs(path.read_bytes(), xs, len(outputs))
    got = {n: np.load(tmp / "out" / f"{n}.npy") for n in outputs
           if (tmp / "out" / f"{n}.npy").is_file()}
    return r, want, got


def test_keyword_spotting_convolutions_on_the_coprocessor_under_zephyr(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path],
        tmp_path: Path) -> None:
    """Three runs: TFLM's outputs; the weights cross once; the plan has npu0's pool."""
    r, want, got = run_kws(tmp_path, cli, tflite_model, "--iterations", "3")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    weights_cross_once(r.out, tmp_path / "b")


@pytest.mark.parametrize("fault,arg,code", [
    (FAULT_BAD_CRC, 0, "TVM_DEVICE_ERR_IO"),
    (FAULT_DELAY, 3000, "TVM_DEVICE_ERR_TIMEOUT"),
    (FAULT_DIE, 0, "TVM_DEVICE_ERR_TIMEOUT")],
    ids=["corrupted-answer", "late-answer", "dies-mid-inference"])
def test_a_fault_under_zephyr_returns_its_code_and_the_next_run_is_tflms(
        fault: int, arg: int, code: str, cli: Callable[..., Result],
        tflite_model: Callable[[str], Path], tmp_path: Path) -> None:
    r, want, got = run_kws(tmp_path, cli, tflite_model, "--cflags=-DTVMDEV_RETRY=20",
                           hook=FAULT_HOOK.format(fault=fault, arg=arg))
    assert re.search(rf"^  that run returned -\d+ {code}: run again", r.out, re.M), r.out
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "Destroy" not in r.out, r.out  # the app says when Destroy fails
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    assert bus(r.out)[-1][0] == 0
