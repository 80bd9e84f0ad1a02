"""Devices with memory of their own, planned (docs/device-memory.md): one pool per device
instance, copies exactly where a tensor crosses between the CPU's memory and a device's,
constants in the pool and out of every run's copies, intermediates of consecutive
operators on one device never in CPU memory; the steps replayed (tests/device_memory_check)
on a built model and on random graphs."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import Result
from device_memory_check import check_pools, replay
from models import model_path
from test_plan import random_model

from tvmdev.errors import TvmdevError
from tvmdev.frontends.importer import import_file
from tvmdev.load.board import board_by_name
from tvmdev.model.device import DeviceMemory
from tvmdev.model.graph import Model
from tvmdev.plan.device_memory import DeviceMemoryPlan
from tvmdev.plan.pipeline import Compiled, Options, compile_model
from tvmdev.render.device import user_device_specs

MEM = DeviceMemory(65536, 32)


def conv_fc(tmp: Path, devices: list[str], places: list[str]) -> Model:
    """tests/test_int8_devices.py's QUANTIZE, CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
    DEQUANTIZE model, with ``devices`` and ``places``."""
    pytest.importorskip("tflite", reason="pip install -e '.[tflite]'")
    from test_int8_devices import conv_fc_model

    from tvmdev.frontends.importer import import_file
    path = tmp / "conv_fc.tflite"
    path.write_bytes(conv_fc_model())
    im = import_file(path)
    im.place(devices, places)
    return im.to_model()


def planned(m: Model, tmp: Path, memory: DeviceMemory = MEM, schedule: str = "eager",
            kind: str = "woofles") -> Compiled:
    return compile_model(m, board_by_name("host"),
                         Options(schedule, stand_in_kernels=True,
                                 device_memory=((kind, memory),)),
                         device_root=tmp / "devices")


def _plan(c: Compiled) -> DeviceMemoryPlan:
    assert c.device_memory is not None
    return c.device_memory


def _out(m: Model, op: str) -> str:
    return next(o.outputs[0] for o in m.operators if o.op == op)


def _copies(plan: DeviceMemoryPlan) -> list[tuple[str, str | None, str | None]]:
    return [(s.action, s.device, s.tensor) for s in plan.steps
            if s.action in ("copy_to", "copy_from")]


@pytest.mark.parametrize("schedule", ["eager", "lazy"])
def test_copies_exactly_at_the_boundaries(schedule: str, tmp_path: Path) -> None:
    m = conv_fc(tmp_path, ["npu0:woofles"], ["conv2d,depthwise_conv2d=npu0"])
    c = planned(m, tmp_path, schedule=schedule)
    plan = _plan(c)
    q, a, b = _out(m, "quantize"), _out(m, "conv2d"), _out(m, "depthwise_conv2d")
    # In once (the quantized input), back once (the depthwise output the CPU's fully
    # connected reads); the convolution's output stays in the device's memory.
    assert _copies(plan) == [("copy_to", "npu0", q), ("copy_from", "npu0", b)]
    assert plan.device_only == {a} and a not in c.memory.offsets
    assert plan.bytes_copied(c.model, "copy_to") == c.model.tensors[q].nbytes == 7 * 6 * 4
    assert plan.bytes_copied(c.model, "copy_from") == c.model.tensors[b].nbytes == 4 * 3 * 12
    (pool,) = plan.pools
    weights = [t for op in m.operators if op.op in ("conv2d", "depthwise_conv2d")
               for t in op.inputs[1:] if t is not None]
    assert sorted(pool.constants) == sorted(weights)
    assert pool.constant_region[1] == sum(-(-m.tensors[w].nbytes // 32) * 32 for w in weights)
    assert pool.ratio == 1.0 and pool.alignment == 32 and pool.capacity == MEM.size
    # Each device operator calls the device's kernel alone: no CPU kernel can take over.
    for i in plan.mem_ops:
        assert [k.name for k in c.chains[i]] == [f"woofles_{m.operators[i].op}_s8"]
    counts = replay(c.model, plan)
    assert counts["open"] == counts["close"] == counts["load"] == 1
    check_pools(c.model, plan)


def test_two_instances_have_two_pools(tmp_path: Path) -> None:
    """npu0 runs the convolution and the fully connected layer, npu1 the depthwise one
    between them: each result crosses through the CPU once each way."""
    m = conv_fc(tmp_path, ["npu0:woofles", "npu1:woofles"],
                ["conv2d,fully_connected=npu0", "depthwise_conv2d=npu1"])
    c = planned(m, tmp_path)
    plan = _plan(c)
    q, a, b, y = (_out(m, o) for o in ("quantize", "conv2d", "depthwise_conv2d",
                                       "fully_connected"))
    assert _copies(plan) == [("copy_to", "npu0", q), ("copy_from", "npu0", a),
                             ("copy_to", "npu1", a), ("copy_from", "npu1", b),
                             ("copy_to", "npu0", b), ("copy_from", "npu0", y)]
    assert [p.device for p in plan.pools] == ["npu0", "npu1"]
    assert all(p.ratio == 1.0 for p in plan.pools)
    assert not set(plan.pool("npu0").constants) & set(plan.pool("npu1").constants)
    replay(c.model, plan)
    check_pools(c.model, plan)


def test_a_model_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    m = conv_fc(tmp_path, ["npu0:woofles"], ["conv2d,depthwise_conv2d=npu0"])
    with pytest.raises(TvmdevError) as e:
        planned(m, tmp_path, DeviceMemory(512, 16))
    assert str(e.value).endswith(
        ": device npu0 needs 848 bytes of memory (432 for tensors and scratch, 416 for "
        "constants); its kind woofles has 512")
    assert e.value.hint == ("place fewer operators on it, or declare more memory "
                            "(tvmdev run --device-option memory=SIZE)")


@pytest.mark.parametrize("seed", range(3))
def test_random_graphs_on_two_devices(seed: int, tmp_path: Path) -> None:
    """Random graphs (test_plan's), each operator on the CPU, npu0 or npu1 at random:
    the steps replay, the pools are safe, and a CPU operator that does not read a
    device's results runs while its job is pending somewhere."""
    m = random_model(tmp_path, 15 + seed * 5, seed)
    rng = random.Random(seed)
    from dataclasses import replace

    from tvmdev.errors import Where
    from tvmdev.model.graph import Device
    devices = (Device("npu0", "woofles", Where(m.path)), Device("npu1", "woofles", Where(m.path)))
    ops = tuple(replace(op, device=rng.choice([None, "npu0", "npu1"])) for op in m.operators)
    m = replace(m, devices=devices, operators=ops)
    c = planned(m, tmp_path, DeviceMemory(1 << 20, 16))
    plan = _plan(c)
    counts = replay(c.model, plan)
    check_pools(c.model, plan)
    assert counts["copy_to"] >= 1


def test_examples_pools_are_optimal(tmp_path: Path) -> None:
    """The examples with devices, their kind given memory: each pool at its lower bound."""
    from conftest import REPO

    from tvmdev.load.model import load_model
    seen = 0
    for path in sorted((REPO / "examples").glob("*/*.yaml")):
        m = load_model(path)
        if not m.devices:
            continue
        c = planned(m, tmp_path, DeviceMemory(1 << 20, 16))
        plan = _plan(c)
        replay(c.model, plan)
        check_pools(c.model, plan)
        for p in plan.pools:
            assert p.ratio == 1.0, (path.name, p.device, p.size, p.lower_bound)
            seen += 1
    assert seen >= 3


OVERLAP = """name: overlap
devices:
  npu0: {kind: woofles}
inputs:
  x: {shape: [1, 64], dtype: float32}
outputs:
  y: {shape: [1, 32], dtype: float32}
constants:
  w: {shape: [64, 32], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  v: {shape: [64, 32], dtype: float32, random: {seed: 2, low: -1, high: 1}}
operators:
  - {name: fc, op: gemm, inputs: [x, w], outputs: [h], device: npu0}
  - {name: cpu_fc, op: gemm, inputs: [x, v], outputs: [g]}
  - {name: act, op: relu, inputs: [g], outputs: [r]}
  - {name: sum, op: add, inputs: [h, r], outputs: [y]}
"""


def test_cpu_operators_run_while_the_device_job_is_pending(tmp_path: Path) -> None:
    """The Wait comes as late as the schedule allows: the CPU's gemm and relu, which do
    not read the device's result, run between the device's job and its Wait."""
    from tvmdev.load.model import load_model
    (tmp_path / "overlap.yaml").write_text(OVERLAP)
    c = planned(load_model(tmp_path / "overlap.yaml"), tmp_path)
    plan = _plan(c)
    assert [(s.action, s.tensor or (c.model.operators[s.op].name if s.op is not None
                                    else None)) for s in plan.steps] == [
        ("activate", None), ("open", None), ("load", None), ("copy_to", "x"), ("wait", None),
        ("op", "fc"), ("op", "cpu_fc"), ("op", "act"), ("wait", None), ("copy_from", "h"),
        ("wait", None), ("close", None), ("op", "sum"), ("deactivate", None)]
    assert replay(c.model, plan)["cpu_ops_while_pending"] == 2


@pytest.mark.parametrize("args,message", [
    (["--board", "qemu_cortex_m3", "--device-option", "memory=4096"],
     "tvmdev: --device-option memory=: board qemu_cortex_m3's simulated zephyr devices "
     "have no memory of their own"),
    (["--device-option", "memory=12x"],
     "tvmdev: --device-option memory='12x' is not a size"),
    (["--device-option", "memory=4096:24"],
     "tvmdev: --device-option memory='4096:24': the alignment 24 is not a power of two"),
    (["--device-option", "memory=4100:32"],
     "tvmdev: --device-option memory='4100:32': the size 4100 is not a multiple of the "
     "alignment 32"),
    (["--device-option", "async=on"],
     "tvmdev: --device-option async=on: only devices with memory complete asynchronously"),
    (["--device-option", "memory=1024"],
     "tvmdev: {mlp}: device npu0 needs 14400 bytes of memory (6080 for tensors and scratch, "
     "8320 for constants); its kind woofles has 1024"),
])
def test_run_refuses_memory_it_cannot_simulate(args: list[str], message: str, cli: Any,
                                               tmp_path: Path) -> None:
    from conftest import REPO
    mlp = REPO / "examples/mlp/mlp.yaml"
    r = cli("run", str(mlp), *args, "--build-dir", str(tmp_path / "b"))
    assert r.code == 1 and r.err.splitlines()[0] == message.format(mlp=mlp), r.err
    assert not (tmp_path / "b").exists()


REOPEN = """name: reopen
devices:
  npu0: {kind: woofles}
inputs:
  x: {shape: [1, 64], dtype: float32}
outputs:
  y: {shape: [1, 32], dtype: float32}
constants:
  w: {shape: [64, 32], dtype: float32, random: {seed: 1, low: -1, high: 1}}
operators:
  - {name: fc, op: gemm, inputs: [x, w], outputs: [h], device: npu0}
  - {name: act, op: relu, inputs: [h], outputs: [r], device: npu0}
  - {name: cpu, op: tanh, inputs: [r], outputs: [g]}
  - {name: sum, op: add, inputs: [h, g], outputs: [y], device: npu0}
"""


def test_only_constants_survive_a_close(tmp_path: Path) -> None:
    """npu0 closes for the CPU's tanh; its fc result, which its add reads after, goes back
    to the CPU at the Close and in again after the next Open (another user of npu0 may
    come between), and the constants are not sent again."""
    from tvmdev.load.model import load_model
    (tmp_path / "reopen.yaml").write_text(REOPEN)
    c = planned(load_model(tmp_path / "reopen.yaml"), tmp_path)
    plan = _plan(c)
    assert [(s.action, s.tensor) for s in plan.steps if s.action not in ("wait", "op")] == [
        ("activate", None), ("open", None), ("load", None), ("copy_to", "x"),
        ("copy_from", "r"), ("copy_from", "h"), ("close", None), ("open", None),
        ("copy_to", "h"), ("copy_to", "g"), ("copy_from", "y"), ("close", None),
        ("deactivate", None)]
    replay(c.model, plan)
    check_pools(c.model, plan)


def test_a_board_offload_device_declares_memory(tmp_path: Path) -> None:
    """A board file's offload device with ``memory:``: its operators run from a pool of
    that size, as with --device-option memory=."""
    from conftest import REPO

    from tvmdev.cli.sim_memory import kinds_with_memory
    text = (REPO / "boards/host.yaml").read_text().replace("name: host", "name: npu_host")
    board_file = tmp_path / "npu_host.yaml"
    board_file.write_text(text + "offload:\n  device: npu0\n  kind: woofles\n"
                          "  ops: [conv2d, depthwise_conv2d]\n"
                          "  memory: {size: 4096, alignment: 64}\n")
    board = board_by_name(str(board_file))
    assert board.offload is not None and board.offload.memory == DeviceMemory(4096, 64)
    m = conv_fc(tmp_path, [], [])
    memory = kinds_with_memory(m, board, None, [])
    assert memory == (("woofles", DeviceMemory(4096, 64)),)
    c = compile_model(m, board, Options(stand_in_kernels=True, device_memory=memory),
                      device_root=tmp_path / "devices")
    (pool,) = _plan(c).pools
    assert (pool.device, pool.capacity, pool.alignment) == ("npu0", 4096, 64)
    assert sorted(c.model.operators[i].op for i in _plan(c).mem_ops) == [
        "conv2d", "depthwise_conv2d"]


def test_an_operator_it_cannot_run_from_memory_is_refused(tmp_path: Path) -> None:
    from tvmdev.load.model import load_model
    (tmp_path / "cat.yaml").write_text("""name: cat
devices:
  npu0: {kind: woofles}
inputs:
  a: {shape: [1, 4], dtype: float32}
  b: {shape: [1, 4], dtype: float32}
outputs:
  y: {shape: [1, 8], dtype: float32}
operators:
  - {name: join, op: concat, inputs: [a, b], outputs: [y], attrs: {axis: 1}, device: npu0}
""")
    with pytest.raises(TvmdevError) as e:
        planned(load_model(tmp_path / "cat.yaml"), tmp_path)
    assert str(e.value).endswith(
        ": operator join (concat) on device npu0 takes a variable number of tensors: a "
        "device with memory of its own cannot run it yet")
    assert e.value.hint == "place it on the CPU, or give npu0's kind no memory"


@pytest.mark.slow  # two plans with CMSIS-NN's buffer-size probes
def test_a_coprocessors_scratch_is_planned_for_its_own_kernels(tmp_path: Path,
                                                               cli: Callable[..., Result]
                                                               ) -> None:
    """``--coprocessor npu0=mps3_an547``: each operator on npu0 gets, in npu0's pool, at
    least the scratch the M55's own plan of the same model gives it (CMSIS-NN's MVE
    buffers, from its probe), and at least the M4's: the co-processor keeps none of its
    own (runtime/coproc/firmware.c)."""
    kws = model_path("keyword_spotting.tflite")
    if kws is None or not os.environ.get("CMSIS_NN_SOURCE_DIR"):
        pytest.skip("needs keyword_spotting.tflite (tests/models.py) and CMSIS_NN_SOURCE_DIR "
                    "(the CMSIS-NN v7.0.0 tree), whose probes size the scratch")
    assert cli("new-device", "uart_npu", "--platform", "cmsis", "--rtos", "cmsis-rtos2",
               "--memory", "65536:16", "--ops", "conv2d,depthwise_conv2d", "-o", "dev",
               cwd=tmp_path).code == 0
    im = import_file(kws)
    im.place(["npu0:uart_npu"], ["conv2d,depthwise_conv2d=npu0"])
    specs = user_device_specs(tmp_path / "dev")
    opts = Options("lazy", device_dir=tmp_path / "dev", device_specs=specs,
                   device_memory=tuple((s.name, s.memory) for s in specs if s.memory))

    def pool_scratch(board: str, device_boards: tuple[tuple[str, str], ...]) -> dict[str, int]:
        c = compile_model(im.to_model(), board_by_name(board),
                          replace(opts, device_boards=device_boards))
        assert c.device_memory is not None
        return {c.model.operators[i].name: n for p in c.device_memory.pools
                for i, (_, n) in p.scratch.items()}

    def own(board: str) -> dict[str, int]:
        c = compile_model(import_file(kws).to_model(), board_by_name(board))
        return {op.name: p.scratch[1] for op, p in zip(c.model.operators, c.ops, strict=True)
                if op.op in ("conv2d", "depthwise_conv2d")}

    planned = pool_scratch("mps2_an386", (("npu0", "mps3_an547"),))
    m55, m4 = own("mps3_an547"), own("mps2_an386")
    assert any(m55[n] > m4[n] for n in m55)  # the MVE code asks for more somewhere
    for name in m55:
        assert planned.get(name, 0) >= max(m55[name], m4[name]), name
    # Without the co-processor's board, the M4's sizes alone (what the firmware lacked).
    alone = pool_scratch("mps2_an386", ())
    assert all(alone.get(n, 0) == m4[n] for n in m4)
