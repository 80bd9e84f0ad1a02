"""One compile pipeline: ``tvmdev aot`` and ``tvmdev run`` compile a model through the same
function, so they write the same bytes; the aot folder builds on its own with CMake; a
device operator's chain goes on to the board's kernel library; and no fallback is silent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool

from tvmdev.load.board import board_by_name
from tvmdev.load.device_kernels import stand_in_library
from tvmdev.load.library import load_library
from tvmdev.model.device import DeviceSpec
from tvmdev.plan.kernels import portable_library
from tvmdev.render.device import device_files

MLP = REPO / "examples/mlp/mlp.yaml"
TREE = os.environ.get("CMSIS_NN_SOURCE_DIR")


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the write manifest, by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".tvmdev.json"}


def cmsis_nn() -> list[str]:
    """The CMSIS-NN tree when there is one (the board's library), else its absence."""
    return [] if TREE else ["--cmsis-nn", "off"]


def device_folder(cli: Callable[..., Result], root: Path, kind: str, ops: str,
                  platform: str = "posix") -> Path:
    r = cli("new-device", kind, "--platform", platform, "--ops", ops, "-o", str(root))
    assert r.code == 0, r.err
    return root


# --- the same bytes ------------------------------------------------------------------------

CASES = {
    "kws-host": ("keyword_spotting.tflite", "host"),
    "kws-m4": ("keyword_spotting.tflite", "mps2_an386"),
    "kws-m55": ("keyword_spotting.tflite", "mps3_an547"),
    "image-aarch64": ("image_example1.float32.tflite", "linux_aarch64"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_aot_and_run_write_the_same_model_folder(case: str, cli: Callable[..., Result],
                                                 tflite_model: Callable[[str], Path],
                                                 tmp_path: Path) -> None:
    name, board = CASES[case]
    model = tflite_model(name)
    extra = cmsis_nn() if board.startswith("mps") else []
    run = cli("run", str(model), "--board", board, "--build-dir", str(tmp_path / "b"), *extra)
    assert run.code == 0, run.out + run.err
    aot = cli("aot", str(model), "--board", board, "-o", str(tmp_path / "a"), *extra)
    assert aot.code == 0, aot.err
    assert files(tmp_path / "a") == files(tmp_path / "b/model")
    # The same decisions are said by both.
    said = [line for line in run.out.splitlines() if line.startswith("kernels: ")]
    assert said and said[0] in aot.out.splitlines()
    if board == "linux_aarch64":  # the board's offload: KleidiAI first, for aot too
        assert "kleidiai" in said[0]


@pytest.mark.slow
def test_a_model_with_devices_gives_the_same_bytes(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    dev = device_folder(cli, tmp_path / "dev", "woofles", "gemm")
    run = cli("run", str(MLP), "--device-dir", str(dev), "--build-dir", str(tmp_path / "b"),
              "--schedule", "lazy")
    assert run.code == 0, run.out + run.err
    aot = cli("aot", str(MLP), "--device-dir", str(dev), "-o", str(tmp_path / "a"),
              "--schedule", "lazy")
    assert aot.code == 0, aot.err
    assert files(tmp_path / "a") == files(tmp_path / "b/model")
    assert "woofles_gemm_f32(" in (tmp_path / "a/tvmgen_mlp.c").read_text()


# --- the aot folder on its own ---------------------------------------------------------------

def test_the_aot_folder_holds_what_its_code_includes(cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    assert cli("aot", str(MLP), "-o", str(tmp_path / "a")).code == 0
    got = files(tmp_path / "a")
    assert "tvm/device/status.h" in got
    assert {p for p in got if p.startswith("kernels/")} == {
        "kernels/portable/gemm.c", "kernels/portable/relu.c", "kernels/portable/softmax.c",
        "kernels/portable/tvmk_portable.h"}
    assert {"CMakeLists.txt", "tvmgen_mlp.cmake"} <= set(got)
    for text in (got["CMakeLists.txt"], got["tvmgen_mlp.cmake"]):
        assert str(tmp_path) not in text.decode() and str(REPO) not in text.decode()


@pytest.mark.slow
def test_a_cmake_project_builds_the_aot_folder_for_the_host(cli: Callable[..., Result],
                                                            tmp_path: Path) -> None:
    need_tool("cmake")
    dev = device_folder(cli, tmp_path / "dev", "woofles", "gemm")
    assert cli("aot", str(MLP), "--device-dir", str(dev), "-o", str(tmp_path / "a")).code == 0
    project = tmp_path / "user"
    project.mkdir()
    (project / "main.c").write_text(
        '#include <stdio.h>\n#include "tvmgen_mlp.h"\n#include "tvm/device/woofles/posix.h"\n'
        "int main(void)\n{\n"
        "    static float x[TVMGEN_MLP_X_SIZE / sizeof(float)];\n"
        "    static float y[TVMGEN_MLP_Y_SIZE / sizeof(float)];\n"
        "    struct tvmgen_mlp_inputs in = {x};\n    struct tvmgen_mlp_outputs out = {y};\n"
        "    tvm_device_woofles_t npu0, npu1;\n"
        "    struct tvmgen_mlp_devices devs = {&npu0, &npu1};\n"
        "    if (TVMDeviceWooflesInit(&npu0, NULL) || TVMDeviceWooflesInit(&npu1, NULL)) {\n"
        "        return 2;\n    }\n"
        "    int32_t s = tvmgen_mlp_run(&in, &out, &devs);\n"
        '    printf("status %d y0 %g\\n", (int)s, (double)y[0]);\n'
        "    return s != 0;\n}\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(user C)\n"
        f"add_subdirectory({tmp_path / 'a'} tvmgen)\n"
        f"add_subdirectory({dev} dev)\n"
        "target_link_libraries(tvmgen_mlp PUBLIC tvm_device_woofles_posix "
        "tvm_kernels_woofles)\n"
        "add_executable(app main.c)\n"
        "target_compile_options(app PRIVATE -Wall -Wextra -Werror)\n"
        "target_link_libraries(app PRIVATE tvmgen_mlp)\n")
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(project), "-B", str(build)],
                ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([str(build / "app")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("status 0 "), proc.stdout


@pytest.mark.slow
def test_a_cmake_project_builds_the_aot_folder_for_cortex_m4(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path],
        tmp_path: Path) -> None:
    """keyword_spotting's aot folder (on CMSIS-NN where the tree is) built by a user's
    CMake project alone, around the firmware harness a run wrote: the same outputs, bit
    for bit, as tvmdev run's firmware."""
    need_tool("cmake")
    gcc = need_tool("arm-none-eabi-gcc")
    qemu = need_tool("qemu-system-arm")
    model = tflite_model("keyword_spotting.tflite")
    board = board_by_name("mps2_an386")
    run = cli("run", str(model), "--board", board.name, "--build-dir", str(tmp_path / "b"),
              *cmsis_nn())
    assert run.code == 0, run.out + run.err
    assert cli("aot", str(model), "--board", board.name, "-o", str(tmp_path / "a"),
               *cmsis_nn()).code == 0
    tc = board.toolchain
    project = tmp_path / "user"
    project.mkdir()
    flags = " ".join(tc.cflags)
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR arm)\n"
        f"set(CMAKE_C_COMPILER {gcc})\nset(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
        f'set(CMAKE_C_FLAGS "{flags}")\nproject(user C)\n'
        f"add_subdirectory({tmp_path / 'a'} tvmgen)\n"
        f"add_executable(fw.elf {tmp_path / 'b/main.c'} "
        + " ".join(str(s) for s in board.support.sources) + ")\n"
        "target_include_directories(fw.elf PRIVATE "
        + " ".join(str(i) for i in board.support.include)
        + f" {REPO / 'platforms/cmsis/include'})\n"
        "target_compile_definitions(fw.elf PRIVATE "
        + " ".join([*tc.defines, *(f"{k}={v}" for k, v in board.support.defines)]) + ")\n"
        "target_link_libraries(fw.elf PRIVATE tvmgen_keyword_spotting)\n"
        f"target_link_options(fw.elf PRIVATE -T{tmp_path / 'b/link.ld'} "
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
    if TREE:
        assert "cmsis_nn 2" in run.out and "tvmdev_cm 10" in run.out, run.out


# --- kernels: the chain, and fallbacks said --------------------------------------------------

def test_the_stand_in_library_is_the_one_new_device_writes(tmp_path: Path) -> None:
    """The kernels the pipeline plans for a kind without the user's folder are those of
    the kernels/<kind>.yaml new-device writes for it, kernel by kernel."""
    ops = ("gemm", "conv2d", "depthwise_conv2d", "fully_connected", "add", "quantize",
           "concat", "relu6", "global_average_pool")
    spec = DeviceSpec("npu", ("posix",), ops=ops, command="x", given="npu")
    text = next(f for f in device_files(spec) if f.path == "kernels/npu.yaml").data.decode()
    written = load_library(tmp_path / "kernels/npu.yaml", "device", "npu", "npu",
                           tmp_path / "include", text=text)
    planned = stand_in_library("npu", ops, portable_library(), tmp_path)
    key = [(k.op, k.name, k.arg_meta, k.header, k.include_dir, k.sources)
           for k in written.kernels]
    assert key == [(k.op, k.name, k.arg_meta, k.header, k.include_dir, k.sources)
                   for k in planned.kernels]


def test_a_device_kind_missing_from_the_device_folder_is_one_line(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    dev = device_folder(cli, tmp_path / "dev", "spinpu", "gemm")
    shutil.copytree(MLP.parent, tmp_path, dirs_exist_ok=True)
    text = (tmp_path / "mlp.yaml").read_text().replace("woofles", "spinnpu")
    (tmp_path / "mlp.yaml").write_text(text)
    for verb, out in (("run", "--build-dir"), ("aot", "-o")):
        r = cli(verb, str(tmp_path / "mlp.yaml"), "--device-dir", str(dev), out,
                str(tmp_path / "out"))
        assert r.code == 1 and "Traceback" not in r.err, r.err
        line = r.err.splitlines()[0]
        assert re.fullmatch(r"tvmdev: .*mlp\.yaml:\d+: device 'npu0' is of kind 'spinnpu', "
                            r"which the --device-dir folder does not hold \(it holds "
                            r"spinpu\)", line), line
        assert not (tmp_path / "out").exists()


def test_an_operator_its_device_cannot_run_says_where_it_went(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    dev = device_folder(cli, tmp_path / "dev", "woofles", "gemm")
    shutil.copytree(MLP.parent, tmp_path, dirs_exist_ok=True)
    text = (tmp_path / "mlp.yaml").read_text().replace("outputs: [a1]}",
                                                      "outputs: [a1], device: npu0}")
    (tmp_path / "mlp.yaml").write_text(text)
    r = cli("aot", str(tmp_path / "mlp.yaml"), "--device-dir", str(dev), "-o",
            str(tmp_path / "a"))
    assert r.code == 0, r.err
    line = next(x for x in r.out.splitlines() if x.startswith("kernels: "))
    assert line == ("kernels: woofles 2 (gemm 2) then portable, portable 2 (relu, softmax); "
                    "fallback: act1 on npu0 (device kind woofles has no relu kernel for its "
                    "dtypes: portable)")


def test_without_the_device_folder_aot_says_what_it_plans(cli: Callable[..., Result],
                                                         tmp_path: Path) -> None:
    r = cli("aot", str(MLP), "-o", str(tmp_path / "a"))
    assert r.code == 0, r.err
    assert ("note: device kind woofles: no --device-dir, so its operators are planned on "
            "the other kernel libraries; give the folder tvmdev new-device made for it to "
            "call its kernels") in r.out.splitlines()


def _declining(folder: Path) -> None:
    """Make every kernel of a device folder decline (TVM_DEVICE_DECLINED), as a real
    accelerator's kernel does for a call it cannot serve."""
    call = re.compile(r"return (tvmk_\w+)\(([^;]*)\);", re.S)
    for src in folder.glob("src/kernels/*/*.c"):
        def declined(m: re.Match[str]) -> str:
            args = [a.strip() for a in m.group(2).split(",")]
            return "".join(f"(void){a}; " for a in args) + "return TVM_DEVICE_DECLINED;"
        src.write_text(call.sub(declined, src.read_text()))


@pytest.mark.slow
def test_a_declining_device_goes_on_to_cmsis_nn(cli: Callable[..., Result],
                                                tflite_model: Callable[[str], Path],
                                                tmp_path: Path) -> None:
    """keyword_spotting's convolutions on a device that declines them run on the board's
    libraries (tvmdev_cm, then CMSIS-NN):
    within 2% of the instructions of the model without the device."""
    if not TREE:
        pytest.skip("CMSIS_NN_SOURCE_DIR is not set: the CMSIS-NN tree (ARM-software/"
                    "CMSIS-NN v7.0.0) is in no package registry; check it out and set it")
    model = tflite_model("keyword_spotting.tflite")
    dev = device_folder(cli, tmp_path / "dev", "npu", "conv2d,depthwise_conv2d", "cmsis")
    _declining(dev)
    plain = cli("run", str(model), "--board", "mps2_an386", "--instructions",
                "--build-dir", str(tmp_path / "plain"))
    assert plain.code == 0, plain.out + plain.err
    on = cli("run", str(model), "--board", "mps2_an386", "--instructions",
             "--device", "npu0:npu", "--place", "conv2d,depthwise_conv2d=npu0",
             "--device-dir", str(dev), "--build-dir", str(tmp_path / "on"))
    assert on.code == 0, on.out + on.err
    # Each declined call goes on to the board library that takes it there: tvmdev's own
    # Cortex-M kernels take them all (the first, 10x4, on their general convolution).
    assert "then cmsis_nn" not in on.out, on.out
    assert "npu 9 (conv2d 5, depthwise_conv2d 4) then tvmdev_cm" in on.out, on.out

    def count(out: str) -> int:
        found = re.search(r"instructions per inference: ([\d,]+)", out)
        assert found, out
        return int(found[1].replace(",", ""))

    ratio = count(on.out) / count(plain.out)
    assert 1.0 <= ratio < 1.02, (count(on.out), count(plain.out))
