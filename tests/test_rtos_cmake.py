"""``tvmdev aot --board B --rtos K``: the aot folder holds the kernel glue (rtos/: the
configuration, RTE_Components.h and the CMSIS device header, the board's startup with its
weak handlers, the linker script with the kernel's heap and stacks) and a CMake library
of the kernel built from its trees, so that a user's CMake project needs only those trees.
The slow test builds keyword_spotting so for mps2_an386 under both kernels with the firmware
harness of ``tvmdev run`` as the user's main, and runs it under QEMU: the same printed
outputs, bit for bit, as ``tvmdev run``'s own firmware (itself checked against the
reference). Without a kernel tree it skips, saying which (tests/test_rtos.py).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool
from test_pipeline import cmsis_nn, files
from test_rtos import need_trees

from tvmdev.load.board import board_by_name
from tvmdev.load.rtos import load_rtos

MLP = REPO / "examples/mlp/mlp.yaml"


@pytest.mark.parametrize("kernel", ["rtx5", "freertos"])
def test_aot_writes_the_kernel_glue(kernel: str, cli: Callable[..., Result],
                                    tmp_path: Path) -> None:
    """No tree needed to write the folder: its CMakeLists.txt names each tree by its
    variable, never a path of this machine; the memory report counts the kernel's memory."""
    r = cli("aot", str(MLP), "--board", "mps2_an386", "--rtos", kernel, "-o", "a",
            "--cmsis-nn", "off", cwd=tmp_path)
    assert r.code == 0, r.err
    rtos = load_rtos(kernel)
    got = {p.relative_to(tmp_path / "a/rtos").as_posix()
           for p in (tmp_path / "a/rtos").rglob("*") if p.is_file()}
    assert {"CMakeLists.txt", "RTE_Components.h", "tvmdev_cm_device.h", rtos.config_path,
            "tvmdev_rtos_glue.c", "link.ld", "support/startup.c"} <= got
    cmake = (tmp_path / "a/rtos/CMakeLists.txt").read_text()
    for tree in rtos.trees:
        assert f"-D{tree.env}=<checkout of {tree.pin.repository} at {tree.pin.tag}>" in cmake
        for _, sources in tree.compile:
            assert all(f"${{{tree.env}}}/{s}\n" in cmake for s in sources)
    assert all(f in cmake for f in rtos.cores["cortex-m4"].files)
    assert str(REPO) not in cmake
    assert not [t.env for t in rtos.trees if os.environ.get(t.env)
                and os.environ[t.env] in cmake]  # this machine's checkouts are not named
    assert "add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/rtos rtos)" in (
        tmp_path / "a/CMakeLists.txt").read_text()
    link = (tmp_path / "a/rtos/link.ld").read_text()
    for k in rtos.sections:
        assert f".{k.name} (NOLOAD)" in link
        assert any(line.split()[:1] == [f".{k.name}"] for line in r.out.splitlines()), r.out


def test_aot_refuses_an_rtos_without_a_cmsis_board(cli: Callable[..., Result],
                                                    tmp_path: Path) -> None:
    r = cli("aot", str(MLP), "--rtos", "rtx5", "-o", "a", cwd=tmp_path)
    assert r.code == 1 and r.err.splitlines()[0].endswith(
        "--rtos rtx5: board host is not a board of the cmsis platform with a memory map"), r.err
    assert not (tmp_path / "a").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["rtx5", "freertos"])
def test_a_cmake_project_builds_the_rtos_folder(
        kernel: str, cli: Callable[..., Result], tflite_model: Callable[[str], Path],
        tmp_path: Path) -> None:
    need_trees(kernel)
    need_tool("cmake")
    gcc = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    model = tflite_model("keyword_spotting.tflite")
    board = board_by_name("mps2_an386")
    run = cli("run", str(model), "--board", board.name, "--rtos", kernel, "--build-dir",
              str(tmp_path / "b"), *cmsis_nn())
    assert run.code == 0 and run.out.rstrip().endswith("PASS"), run.out + run.err
    aot = cli("aot", str(model), "--board", board.name, "--rtos", kernel, "-o",
              str(tmp_path / "a"), *cmsis_nn())
    assert aot.code == 0, aot.err
    assert files(tmp_path / "a") == files(tmp_path / "b/model")  # one pipeline, one folder
    tc = board.toolchain
    project = tmp_path / "user"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR arm)\n"
        f"set(CMAKE_C_COMPILER {gcc})\nset(CMAKE_ASM_COMPILER {gcc})\n"
        "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
        f'set(CMAKE_C_FLAGS "{" ".join(tc.cflags)}")\nproject(user C)\n'
        f"add_subdirectory({tmp_path / 'a'} tvmgen)\n"
        f"add_executable(fw.elf {tmp_path / 'b/main.c'})\n"
        "target_link_libraries(fw.elf PRIVATE tvmgen_keyword_spotting tvmdev_rtos)\n"
        "target_link_options(fw.elf PRIVATE "
        + " ".join(f for f in tc.ldflags if f != "-lm") + ")\n")
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(project), "-B", str(build)],
                ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert board.run.qemu is not None

    def printed(elf: Path) -> list[str]:
        proc = subprocess.run([qemu, *board.run.args, "-kernel", str(elf)],
                              capture_output=True, text=True, timeout=120)
        return [line for line in proc.stdout.splitlines()
                if line.startswith(("tvmdev: status", "tvmdev: output", "tvmdev: data"))]

    ours = printed(build / "fw.elf")
    assert ours and ours == printed(tmp_path / "b/keyword_spotting.elf")
    assert ours[0].startswith("tvmdev: status 0")
    symbols = subprocess.run([gcc[:-3] + "nm", str(build / "fw.elf")], capture_output=True,
                             text=True, check=True).stdout
    assert "osKernelStart" in symbols  # the kernel the user's build compiled
