"""The executor of a model whose devices have memory of their own (docs/device-memory.md):
golden files (refresh with --update-goldens) that compile with -Werror -pedantic against
the device headers a run generates for such a kind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import GOLDENS, REPO, need_tool, run_ok, tree

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model.device import DeviceMemory
from tvmdev.plan.pipeline import Compiled, Options, compile_model, generated_specs
from tvmdev.render.device import device_files, project_files
from tvmdev.render.executor import executor_files

CNN = REPO / "examples/cnn/cnn.yaml"
MEMORY = (("woofles", DeviceMemory(32768, 32)),)
GOLDEN = GOLDENS / "executor" / "cnn-memory"


def _compiled(tmp: Path) -> Compiled:
    return compile_model(load_model(CNN), board_by_name("host"),
                         Options("lazy", stand_in_kernels=True, device_memory=MEMORY),
                         device_root=tmp / "devices")


def test_executor_with_device_memory_matches_golden(tmp_path: Path,
                                                   update_goldens: bool) -> None:
    got = {f.path: f.content.encode() for f in executor_files(_compiled(tmp_path),
                                                              "tvmdev aot cnn.yaml")}
    if update_goldens:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        GOLDEN.mkdir(parents=True)
        for rel, data in got.items():
            (GOLDEN / rel).write_bytes(data)
    assert got == tree(GOLDEN), f"differs from {GOLDEN} (refresh with --update-goldens)"
    for rel, data in got.items():
        if rel.endswith((".c", ".h")):
            assert all(len(line) <= 100 for line in data.decode().splitlines()
                       if not line.startswith("#define")), rel


@pytest.mark.slow  # compiles
def test_golden_with_device_memory_compiles_strictly(tmp_path: Path) -> None:
    """The golden executor and the simulated kind's kernels, with the device headers a
    run writes for a kind with memory (its addr typedef, CopyTo, CopyFrom, Wait)."""
    gcc = need_tool("gcc")
    c = _compiled(tmp_path)
    dev = tmp_path / "dev"
    specs = generated_specs(c.devices, c.board, MEMORY)
    for spec in specs:
        for f in [*device_files(spec, sim=True), *project_files(specs)]:
            (dev / f.path).parent.mkdir(parents=True, exist_ok=True)
            (dev / f.path).write_text(f.content)
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
             f"-I{GOLDEN}", f"-I{dev / 'include'}", f"-I{REPO / 'runtime/kernels/portable'}",
             f"-I{REPO / 'runtime/sim'}"]
    run_ok([gcc, *flags, str(GOLDEN / "tvmgen_cnn.c"), "-o", str(tmp_path / "x.o")])
    for src in [*(dev / "src/kernels/woofles").glob("*.c"),
                dev / "src/device/woofles/sim_memory.c"]:
        run_ok([gcc, *flags, str(src), "-o", str(tmp_path / f"{src.stem}.o")])


@pytest.mark.slow  # compiles
def test_scaffold_kernels_of_a_kind_with_memory_compile(tmp_path: Path) -> None:
    """The kernels new-device would scaffold for a kind with memory (not simulated): the
    prototypes of the contract, a TODO body, compiled with -Werror -pedantic."""
    gcc = need_tool("gcc")
    from tvmdev.model.device import DeviceSpec
    spec = DeviceSpec("npu", ("posix",), ops=("conv2d", "depthwise_conv2d"),
                      memory=DeviceMemory(65536, 32))
    dev = tmp_path / "dev"
    for f in [*device_files(spec), *project_files([spec])]:
        (dev / f.path).parent.mkdir(parents=True, exist_ok=True)
        (dev / f.path).write_text(f.content)
    header = (dev / "include/tvm/kernels/npu.h").read_text()
    assert ("int32_t npu_conv2d_s8(tvm_device_npu_addr_t X, tvm_device_npu_addr_t W, "
            "tvm_device_npu_addr_t B, tvm_device_npu_addr_t Y,") in " ".join(header.split())
    assert "#define TVM_DEVICE_NPU_ADDR_NONE 0xffffffffu" in header
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
             f"-I{dev / 'include'}", f"-I{REPO / 'runtime/kernels/portable'}"]
    for src in (dev / "src/kernels/npu").glob("*.c"):
        run_ok([gcc, *flags, str(src), "-o", str(tmp_path / f"{src.stem}.o")])


def test_inspect_reads_the_device_pools_from_the_plan(tmp_path: Path) -> None:
    """``tvmdev inspect --model`` prints the device pools and the bytes a run copies from
    plan.json, in the very lines aot and run print from the compiled plan."""
    from tvmdev.cli.sim_memory import memory_lines
    from tvmdev.inspect.plan import pool_lines, read_plan

    c = _compiled(tmp_path)
    plan = read_plan(GOLDEN)
    assert plan.memory_kinds == {"woofles"}
    assert pool_lines(plan.device_memory) == memory_lines(c)
    assert pool_lines(plan.device_memory)[0].startswith("device npu0: pool ")
