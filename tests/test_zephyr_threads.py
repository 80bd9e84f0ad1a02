"""Zephyr threads sharing devices (issue 22): ``tvmdev run --threads N --iterations M`` on
the west boards runs N Zephyr threads (static stacks, different priorities) that share the
device instances of the Zephyr scaffold, tvmdev's simulated devices, whose skeleton driver
takes two ticks to power up. Each thread's Open/Close and Activate/Deactivate must
balance, with no operator on a device its thread does not hold or that runtime PM has not
resumed; the results are TFLM's. A scaffold whose Activate counts before the device is
powered (the CMSIS defect 1 pattern) is caught by the same counts. These need a Zephyr
tree (ZEPHYR_BASE), which no package registry provides: without one they skip."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool
from test_zephyr import _int8_model, _tflm_outputs

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.run.backend import RunOptions
from tvmdev.run.job import execute, prepare
from tvmdev.run.threads import thread_counts

pytestmark = [pytest.mark.slow,  # west builds
              pytest.mark.skipif(not os.environ.get("ZEPHYR_BASE"),
                                 reason="ZEPHYR_BASE is not set: the Zephyr tests need a "
                                        "Zephyr tree (3.4 or newer; see the README)")]


# The report's line for one thread (tvmdev/run/threads.py thread_lines).
_THREAD_LINE = re.compile(r"^thread (\d+): runs (\d+), results differing (\d+), activate (\d+) "
                          r"/ deactivate (\d+), open (\d+) / close (\d+), operators (\d+), "
                          r"on an unheld or inactive device (\d+): sound$", re.M)


def _need_board(board: str) -> None:
    need_tool("west", "pip install west")
    if board == "qemu_cortex_m3":
        need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
        need_tool("qemu-system-arm", "apt-get install qemu-system-arm")


def _sound(counts: dict[int, dict[str, int]], threads: int, runs: int,
           per_run: dict[str, int]) -> None:
    """Every thread ran ``runs`` times with results equal to thread 0's first, its calls
    balanced at ``per_run`` each per run, and no operator on a device it did not hold or
    that was not resumed."""
    assert sorted(counts) == list(range(threads)), counts
    for n, c in counts.items():
        assert c["runs"] == runs and c["differing"] == 0, (n, c)
        assert c["violations"] == 0, (n, c)
        for fn, k in per_run.items():
            assert c[fn] == k * runs, (n, fn, c)
        assert c["activate"] == c["deactivate"] and c["open"] == c["close"], (n, c)


def test_keyword_spotting_in_three_zephyr_threads_bit_exact(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path], tmp_path: Path
        ) -> None:
    """keyword_spotting with its 5 convolutions and 4 depthwise convolutions on npu0, in
    3 threads of 100 runs on qemu_cortex_m3: TFLM's outputs, and 900 Opens, 100
    Activates and 900 operators per thread, none on an unheld or suspended device."""
    _need_board("qemu_cortex_m3")
    model = _int8_model(tflite_model, "keyword_spotting")
    from tvmdev.frontends.importer import import_file
    from tvmdev.model import reference
    m = import_file(model).to_model()
    given = reference.random_inputs(m, 5)
    (tmp_path / "in").mkdir()
    for name, x in given.items():
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(model), "--board", "qemu_cortex_m3", "--device", "npu0:woofles",
            "--place", "conv2d,depthwise_conv2d=npu0", "--threads", "3", "--iterations",
            "100", "--inputs", str(tmp_path / "in"), "--save-outputs", str(tmp_path / "out"),
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    assert "device npu0: activate 300 / deactivate 300, open 2700 / close 2700, " \
           "operators 2700: balanced" in r.out, r.out
    keys = ("runs", "differing", "activate", "deactivate", "open", "close", "operator",
            "violations")
    counts = {int(t[0]): dict(zip(keys, map(int, t[1:]), strict=True))
              for t in _THREAD_LINE.findall(r.out)}
    _sound(counts, 3, 100, {"activate": 1, "open": 9, "operator": 9})
    want = _tflm_outputs(model, [given[n] for n in m.inputs], len(m.outputs))
    for name, w in zip(m.outputs, want, strict=True):
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert np.array_equal(got.view(np.uint32), w.view(np.uint32)), name


@pytest.mark.parametrize("board", ["qemu_cortex_m3", "native_sim_64"])
def test_racy_activate_is_seen(board: str, tmp_path: Path) -> None:
    """The check can fail: the scaffold changed to power the device up only on the first
    Activate (counting first, as a CMSIS-style use count would) lets a second thread run
    operators while the first one is still waiting for the slow power-up, and the counts
    say so. The scaffold as generated, in the same run setup, is sound."""
    _need_board(board)
    counts, statuses = {}, {}
    for racy in (False, True):
        job = prepare(load_model(REPO / "examples/cnn/cnn.yaml"), board_by_name(board),
                      tmp_path / f"b{int(racy)}")
        scaffold = job.build_dir / "devices/src/device/woofles/zephyr.c"
        if racy:
            text = scaffold.read_text()
            get = ("    err = pm_device_runtime_get(tvm_dev->dev);\n    if (err == 0) {\n"
                   "        (void)atomic_inc(&tvm_dev->active);\n")
            put = "    status = status_from_errno(pm_device_runtime_put(tvm_dev->dev));\n"
            assert text.count(get) == 1 and text.count(put) == 1
            text = text.replace(get, "    err = atomic_inc(&tvm_dev->active) == 0\n"
                                "              ? pm_device_runtime_get(tvm_dev->dev) : 0;\n"
                                "    if (err == 0) {\n")
            text = text.replace(put, "    status = active == 1 ? status_from_errno("
                                "pm_device_runtime_put(tvm_dev->dev)) : TVM_DEVICE_OK;\n")
            scaffold.write_text(text)
        job.defines += ["TVMDEV_THREADS=3", "TVMDEV_ITERATIONS=4"]
        job.backend.build(job)
        result = execute(job, options=RunOptions(threads=3, iterations=4))
        counts[racy] = thread_counts(result.stdout)
        statuses[racy] = result.status
    assert statuses[False] == 0
    _sound(counts[False], 3, 4, {"activate": 2, "open": 3, "operator": 3})
    # The operator that finds its device suspended refuses to run: TVM_DEVICE_ERR_NOT_READY
    assert statuses[True] == -3, statuses
    assert sum(c["violations"] for c in counts[True].values()) > 0, counts[True]


def test_fault_in_a_zephyr_thread(cli: Callable[..., Result], tmp_path: Path) -> None:
    """--fail on a west board is compiled in: the second Open fails with its code in the
    thread that made it, and every Open that succeeded is closed."""
    _need_board("native_sim_64")
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--board", "native_sim_64",
            "--threads", "2", "--iterations", "3", "--fail", "open:2:-5",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1, r.out + r.err
    assert "FAIL: the model returned TVM_DEVICE_ERR_" in r.out and "(-5)" in r.out, r.out
    assert "balanced" in r.out and "threads not sound" not in r.out, r.out
