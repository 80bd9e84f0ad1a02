"""Issue 22 on every RTOS board: keyword_spotting with its convolutions and depthwise
convolutions on a simulated cmsis-rtos2 SPI device, run by three kernel threads on the
Cortex-M55 of mps3_an547 (RTX5's Armv8-M Mainline entry, FreeRTOS's ARM_CM55_NTZ port,
the firmware Secure), bit-exact with TFLM's interpreter (tests/tflm_ref.py); the kernel's
heap and stacks in sections of their own, checked in the ELF. Without a
kernel tree the tests skip, saying which (tests/test_rtos.py's need_trees).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_tool
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from test_int8_devices import tflm_inputs
from test_rtos import need_trees

from tvmdev.frontends.importer import import_file
from tvmdev.load.board import board_by_name
from tvmdev.load.rtos import load_rtos
from tvmdev.render.harness import MAX_THREADS
from tvmdev.render.linker import linker_script
from tvmdev.render.rtos import DEFAULT_HEAP, kernel_heap


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
    check_kernel_sections(kernel, "mps3_an547", tmp_path / "b/keyword_spotting.elf")


def check_kernel_sections(kernel: str, board: str, elf: Path) -> None:
    """The kernel's heap and its own threads' stacks are the ELF's .heap and .stacks, as
    large as the kernel's data says (and aot's memory report prints), zero-filled
    (NOBITS) and holding the kernel's own arrays."""
    rtos = load_rtos(kernel)
    mem = board_by_name(board).memory
    assert mem is not None
    heap = kernel_heap(mem.stack, MAX_THREADS)
    arrays = {"rtx5": {"heap": "os_mem", "stacks": "os_idle_thread_stack"},
              "freertos": {"heap": "ucHeap", "stacks": "uxIdleTaskStack."}}[kernel]
    with elf.open("rb") as f:
        e = ELFFile(f)
        symtab = e.get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        for k in rtos.sections:
            sec = e.get_section_by_name(f".{k.name}")
            assert sec is not None, k.name
            assert sec["sh_type"] == "SHT_NOBITS"
            assert sec["sh_size"] == k.size(heap), (k.name, sec["sh_size"])
            # a function's static has a numbered name (uxIdleTaskStack.2)
            sym = next(s for s in symtab.iter_symbols() if s.name == arrays[k.name]
                       or (arrays[k.name].endswith(".") and s.name.startswith(arrays[k.name])))
            lo, hi = sec["sh_addr"], sec["sh_addr"] + sec["sh_size"]
            assert lo <= sym["st_value"] and sym["st_value"] + sym["st_size"] <= hi, k.name


@pytest.mark.parametrize("kernel", ["rtx5", "freertos"])
def test_the_linker_script_gives_the_kernel_memory_sections(kernel: str) -> None:
    """Without building: the kernel's sections in RAM, before .bss (whose catch-all would
    take their input sections), and zeroed at startup by the zero table."""
    board = board_by_name("mps2_an386")
    assert board.memory is not None
    rtos = load_rtos(kernel)
    script = linker_script(board.memory, None, board.name, "/* test */", rtos.sections,
                           DEFAULT_HEAP)
    assert [k.name for k in rtos.sections] == ["heap", "stacks"]
    for k in rtos.sections:
        at = script.index(f"    .{k.name} (NOLOAD) :")
        assert at < script.index("    .bss (NOLOAD) :")
        assert all(i in script[at:script.index("} > RAM", at)] for i in k.inputs)
        assert (f"LONG(__rtos_{k.name}_start__) LONG(__rtos_{k.name}_end__)"
                in script[script.index("__zero_table_start__ = .;"):])
    assert rtos.sections[0].size(0x20000) >= 0x20000


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["rtx5", "freertos"])
def test_threads_count_the_calls_to_your_own_device(kernel: str, cli: Callable[..., Result],
                                                    tflite_model: Callable[[str], Path],
                                                    tmp_path: Path) -> None:
    """A device folder of your own (the new-device scaffold, SPI, CMSIS-RTOS2 mutexes):
    the harness counts each thread's calls to it through the linker's --wrap. Each run
    activates npu0 once and opens it once per operator placed there (the plan's). Four
    threads, the harness's most: their stacks fit the kernel's heap."""
    need_trees(kernel)
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    assert cli("new-device", "npu", "--platform", "cmsis", "--cmsis-driver", "spi", "--rtos",
               "cmsis-rtos2", "--ops", "conv2d,depthwise_conv2d", "-o", "dev",
               cwd=tmp_path).code == 0
    path = tflite_model("keyword_spotting.tflite")
    r = cli("run", str(path), "--board", "mps2_an386", "--rtos", kernel, "--device",
            "npu0:npu", "--place", "conv2d,depthwise_conv2d=npu0", "--device-dir", "dev",
            "--threads", str(MAX_THREADS), "--iterations", "2", "--build-dir", "b",
            cwd=tmp_path)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    plan = json.loads((tmp_path / "b/model/tvmgen_keyword_spotting_plan.json").read_text())
    ops = sum(1 for o in plan["operators"] if o.get("device") == "npu0")
    assert ops == 9
    threads = [line for line in r.out.splitlines() if line.startswith("thread ")]
    assert threads == [f"thread {i}: runs 2, results differing 0, activate 2 / deactivate 2, "
                       f"open {2 * ops} / close {2 * ops}: sound" for i in range(MAX_THREADS)
                       ], r.out
    assert "__wrap_TVMDeviceNpuOpen" in (tmp_path / "b/main.c").read_text()
