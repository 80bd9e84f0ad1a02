"""Issue 22 on every RTOS board: keyword_spotting with its convolutions and depthwise
convolutions on a simulated cmsis-rtos2 SPI device, run by three kernel threads on the
Cortex-M55 of mps3_an547 (RTX5's Armv8-M Mainline entry, FreeRTOS's ARM_CM55_NTZ port,
the firmware Secure), bit-exact with TFLM's interpreter (tests/tflm_ref.py). Without a
kernel tree the tests skip, saying which (tests/test_rtos.py's need_trees).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_tool
from test_int8_devices import tflm_inputs
from test_rtos import need_trees

from tvmdev.frontends.importer import import_file
from tvmdev.load.rtos import load_rtos


def run_kws(kernel: str, board: str, tmp: Path, cli: Callable[..., Result],
            tflite_model: Callable[[str], Path], *extra: str
            ) -> tuple[Result, list[np.ndarray], dict[str, np.ndarray]]:
    """``tvmdev run`` of keyword_spotting on ``kernel`` with the convolutions on npu0, an
    SPI device; TFLM's outputs and the run's."""
    need_trees(kernel)
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    path = tflite_model("keyword_spotting.tflite")
    names, xs = tflm_inputs(path, 7)
    (tmp / "in").mkdir()
    for name, x in zip(names, xs, strict=True):
        np.save(tmp / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--board", board, "--rtos", kernel,
            "--device", "npu0:woofles", "--place", "conv2d,depthwise_conv2d=npu0",
            "--device-option", "cmsis_driver=spi", "--inputs", str(tmp / "in"),
            "--save-outputs", str(tmp / "out"), "--build-dir", str(tmp / "b"), *extra)
    outputs = import_file(path).to_model().outputs
    want = tflm_ref.outputs(path.read_bytes(), xs, len(outputs))
    got = {n: np.load(tmp / "out" / f"{n}.npy") for n in outputs
           if (tmp / "out" / f"{n}.npy").is_file()}
    return r, want, got


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["rtx5", "freertos"])
def test_threads_on_the_cortex_m55(kernel: str, cli: Callable[..., Result],
                                   tflite_model: Callable[[str], Path],
                                   tmp_path: Path) -> None:
    """Three threads at different priorities share npu0 for five runs each: TFLM's outputs
    bit for bit, every thread's counts balanced, no operator on a device not held or not
    active; the build compiled the kernel's port for the M55 and nothing for another core."""
    r, want, got = run_kws(kernel, "mps3_an547", tmp_path, cli, tflite_model,
                           "--threads", "3", "--iterations", "5")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want, strict=True):
        assert np.array_equal(g, w), name
    threads = [line for line in r.out.splitlines() if line.startswith("thread ")]
    assert len(threads) == 3, r.out
    for line in threads:
        assert "runs 5, results differing 0, activate 5 / deactivate 5, open 45 / close 45" \
            in line and line.endswith("on an unheld or inactive device 0: sound"), line
    assert "device npu0: activate 15 / deactivate 15, open 135 / close 135" in r.out
    build = (tmp_path / "b/build.cmd").read_text()
    port = load_rtos(kernel).cores["cortex-m55"]
    assert all(f in build for f in port.files)
    assert "irq_armv7m.S" not in build and "ARM_CM4F" not in build
    assert "core_cm55.h" in (tmp_path / "b/rtos/tvmdev_cm_device.h").read_text()
