"""Models run from a simulated device's own memory (docs/device-memory.md), bit-exact with
TFLM's interpreter: keyword_spotting's convolutions and depthwise convolutions on npu0
on the host (copies completing at once, and asynchronously: every copy and kernel
PENDING, a copy's bytes moving only at the Wait) and on mps2_an386; the bytes the device
counts crossing each way are the plan's, the constants crossing once for several runs; and
a failure at every call site on the device returns its code with every Open closed and
every Activate deactivated, after which the next run reloads the lost constants and
matches TFLM again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_tool
from test_device_memory import conv_fc
from test_int8_devices import tflm_inputs
from test_rtos import need_trees

from tvmdev.frontends.importer import import_file
from tvmdev.load.board import board_by_name
from tvmdev.model.device import DeviceMemory
from tvmdev.model.graph import Model
from tvmdev.plan.pipeline import Options, compile_model
from tvmdev.run.backend import Job, RunOptions
from tvmdev.run.job import execute, stage

pytestmark = pytest.mark.slow  # builds and runs programs

MEM = (("woofles", DeviceMemory(262144, 32)),)
PLACE = (["npu0:woofles"], ["conv2d,depthwise_conv2d=npu0"])
# The code each injected failure returns: a lost device times out, a corrupted frame is IO.
CODES = {"activate": -11, "open": -12, "operator": -13, "close": -14, "deactivate": -15,
         "copy_to": -5, "copy_from": -5, "wait": -2}


def _kws(path: Path) -> Model:
    im = import_file(path)
    im.place(*PLACE)
    return im.to_model()


def _build(m: Model, build: Path, inputs: dict[str, np.ndarray], asynchronous: bool,
           schedule: str = "eager") -> Job:
    need_tool("gcc", "apt install gcc")
    c = compile_model(m, board_by_name("host"),
                      Options(schedule, stand_in_kernels=True, device_memory=MEM),
                      device_root=build.resolve() / "devices")
    job = stage(c, build, inputs)
    if asynchronous:
        job.defines.append("TVMDEV_SIM_ASYNC=1")
    job.backend.build(job)
    return job


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_keyword_spotting_from_device_memory(asynchronous: bool, tflite_model: Callable[
        [str], Path], tmp_path: Path) -> None:
    path = tflite_model("keyword_spotting.tflite")
    names, xs = tflm_inputs(path, 5)
    inputs = dict(zip(names, xs, strict=True))
    job = _build(_kws(path), tmp_path / "b", inputs, asynchronous)
    plan = job.compiled.device_memory
    assert plan is not None
    res = execute(job, inputs, RunOptions(iterations=3, trace=False))
    assert res.status == 0 and not res.balanced(), (res.stdout, res.devices)
    want = tflm_ref.outputs(path.read_bytes(), xs, len(job.model.outputs))
    for name, w in zip(job.model.outputs, want, strict=True):
        assert np.array_equal(res.outputs[name], w), name
    dev = res.devices["npu0"]
    m = job.model
    to_run, back = plan.bytes_copied(m, "copy_to"), plan.bytes_copied(m, "copy_from")
    (pool,) = plan.pools
    loaded = sum(m.tensors[c].nbytes for c in pool.constants)
    # Three runs: the input crosses three times, the weights once.
    assert (to_run, back, loaded) == (500, 8000, 23552)
    assert dev["bytes_to"] == 3 * to_run + loaded and dev["bytes_from"] == 3 * back
    assert dev["copy_to"] == 3 + len(pool.constants) and dev["copy_from"] == 3
    assert dev["operator"] == 3 * 9 and dev["lost"] == 0 and dev["pending_now"] == 0


def _sites(job: Job) -> dict[str, int]:
    """How many calls of each simulated function the first run makes."""
    plan = job.compiled.device_memory
    assert plan is not None
    loads = sum(len(p.constants) for p in plan.pools)
    count = {a: sum(s.action == a for s in plan.steps)
             for a in ("activate", "open", "close", "deactivate", "copy_to", "copy_from",
                       "wait")}
    count["operator"] = len(plan.mem_ops)
    count["copy_to"] += loads
    count["wait"] += loads
    return count


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("schedule", ["eager", "lazy"])
def test_fault_at_every_memory_call_site(asynchronous: bool, schedule: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    m = conv_fc(tmp_path, *PLACE)
    path = tmp_path / "conv_fc.tflite"
    names, xs = tflm_inputs(path, 9)
    inputs = dict(zip(names, xs, strict=True))
    job = _build(m, tmp_path / "b", inputs, asynchronous, schedule)
    want = tflm_ref.outputs(path.read_bytes(), xs, len(job.model.outputs))
    monkeypatch.setenv("TVMDEV_SIM_RETRY", "1")
    sites = _sites(job)
    assert sites["copy_to"] == 5 and sites["copy_from"] == 1 and sites["operator"] == 2
    injected = 0
    for fn, count in sites.items():
        for nth in range(1, count + 1):
            res = execute(job, inputs, RunOptions(fault=f"{fn}:{nth}:{CODES[fn]}",
                                                  trace=False))
            where = f"{fn}:{nth}"
            assert res.status == CODES[fn], f"{where}: status {res.status}"
            assert not res.balanced(), f"{where}: {res.devices}"
            dev = res.devices["npu0"]
            assert dev["lost"] == 1, where  # a failing device restarts, empty
            # The next run reloads the constants and matches TFLM.
            assert "tvmdev: retry status 0 TVM_DEVICE_OK" in res.stdout, where
            assert dev["bytes_to"] >= sum(job.model.tensors[c].nbytes
                                          for c in job.compiled.device_memory.pools[0].constants)
            for name, w in zip(job.model.outputs, want, strict=True):
                assert np.array_equal(res.outputs[name], w), f"{where}: {name}"
            injected += 1
        res = execute(job, inputs, RunOptions(fault=f"{fn}:{count + 1}:{CODES[fn]}",
                                              trace=False))
        assert res.status == 0 and not res.balanced(), f"{fn}: one past the last site"
    assert injected == sum(sites.values())


@pytest.mark.parametrize("extra,runs", [
    ((), 1),
    (("--rtos", "rtx5", "--threads", "2", "--iterations", "2", "--device-option", "async=on"),
     4)], ids=["bare", "rtx5-threads-async"])
def test_keyword_spotting_from_device_memory_on_mps2_an386(
        extra: tuple[str, ...], runs: int, cli: Callable[..., Result],
        tflite_model: Callable[[str], Path], tmp_path: Path) -> None:
    """The firmware: the device's memory a static array of its own on the board, the
    weights sent once, the outputs TFLM's; also on RTX5 with two threads sharing the
    device, every copy and kernel completing at the Wait."""
    need_tool("qemu-system-arm", "apt install qemu-system-arm")
    need_tool("arm-none-eabi-gcc", "apt install gcc-arm-none-eabi")
    if "--rtos" in extra:
        need_trees("rtx5")  # a tree no registry has: skips, saying which
    path = tflite_model("keyword_spotting.tflite")
    names, xs = tflm_inputs(path, 5)
    (tmp_path / "in").mkdir()
    for name, x in zip(names, xs, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--board", "mps2_an386", "--device", PLACE[0][0],
            "--place", PLACE[1][0], "--device-option", "memory=262144:32",
            "--inputs", str(tmp_path / "in"), "--save-outputs", str(tmp_path / "out"),
            "--build-dir", str(tmp_path / "b"), *extra)
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    assert ("bytes on the bus per run: 500 to the devices, 8000 back; 23552 of constants "
            "per load") in r.out
    # What the device counted: the weights (18 tensors) once, whatever the runs.
    assert (f"device npu0: {runs * 500 + 23552} bytes copied in ({runs + 18} copies), "
            f"{runs * 8000} out ({runs})") in r.out, r.out
    outputs = import_file(path).to_model().outputs
    want = tflm_ref.outputs(path.read_bytes(), xs, len(outputs))
    for name, w in zip(outputs, want, strict=True):
        assert np.array_equal(np.load(tmp_path / "out" / f"{name}.npy"), w), name
    # inspect knows the kind has memory: CopyTo, CopyFrom and Wait must be linked in.
    r = cli("inspect", str(tmp_path / "b/keyword_spotting.elf"), "--model", str(tmp_path / "b"))
    assert r.code == 0 and "device API woofles: all nine functions defined" in r.out, r.out
    assert "device npu0: pool " in r.out and "bytes on the bus per run: 500 " in r.out, r.out
