"""Issue 23 item 1: a co-processor across a real UART between two QEMUs.

The co-processor is tvmdev's reference firmware (runtime/coproc) on mps3_an547 (Cortex-M55,
CMSIS-NN when CMSIS_NN_SOURCE_DIR is set); the main board is mps2_an386 (Cortex-M4) under
RTX5, running examples/uart_npu's driver (an ordinary `new-device` scaffold, filled in)
from tests/c/coproc_main.c, which calls it as the executor calls a device with memory.
Their UART1s are joined by a socket (tvmdev.run.link). keyword_spotting's first four
layers run on the co-processor, with weights copied once; every output is compared with
TFLM's tensors (tests/tflm_ref.py). The faults (a corrupted answer, a late answer, the
co-processor killed mid-inference and restarted) each return their code, every Open has
its Close, and the next run succeeds.

Without QEMU, the Arm toolchain, RTX5's trees or the model, the tests skip, saying why
(under CI the toolchain and QEMU are required: conftest.need_tool).
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_module, need_tool, run_ok

from tvmdev.errors import TvmdevError
from tvmdev.load.board import board_by_name
from tvmdev.load.rtos import load_rtos, missing_trees
from tvmdev.resources import runtime_dir
from tvmdev.run.coproc import Image, build_image, cmsis_nn_tree, coprocessor_image
from tvmdev.run.link import Fault, LinkedResult, LinkedRun, link_args
from tvmdev.run.rtos import rtos_build

EXAMPLE = REPO / "examples/uart_npu"
FAULT_BAD_CRC, FAULT_DELAY, FAULT_DIE = 1, 2, 3
WAIT_MS = 1000


def _need_everything() -> None:
    for board in ("mps2_an386", "mps3_an547"):
        b = board_by_name(board)
        need_tool(b.toolchain.cc, "apt-get install gcc-arm-none-eabi")
        assert b.run.qemu is not None
        need_tool(b.run.qemu, "apt-get install qemu-system-arm")
    missing = missing_trees(load_rtos("rtx5"))
    if missing:
        pytest.skip(", ".join(f"{t.env} is not set: the {t.name} tree" for t in missing))


def _build(board: str, image: Image, out: Path) -> Path:
    """build_image, its compiler's messages in the failure."""
    try:
        return build_image(board_by_name(board), image, out)
    except TvmdevError as e:
        pytest.fail(f"{e}\n{e.log}")


def _main_image(tmp: Path, cli: Callable[..., Result], case_header: str) -> Path:
    """The main board's firmware: the device folder new-device writes, the example's files
    over its scaffold, the case, RTX5."""
    board = board_by_name("mps2_an386")
    assert cli("new-device", "uart_npu", "--platform", "cmsis", "--rtos", "cmsis-rtos2",
               "--ops", "conv2d,depthwise_conv2d", "-o", "dev", cwd=tmp).code == 0
    dev = tmp / "dev"
    for src in EXAMPLE.rglob("*"):
        if src.is_file() and src.suffix in (".c", ".h"):
            dst = dev / src.relative_to(EXAMPLE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    (tmp / "case").mkdir(exist_ok=True)
    (tmp / "case/coproc_case.h").write_text(case_header)
    assert board.run.clock_hz is not None
    kernel = rtos_build(load_rtos("rtx5"), board.cpu, board.name, board.run.clock_hz,
                        tmp / "glue", "tests/test_coproc.py")
    rt = runtime_dir()
    image = Image("main", [REPO / "tests/c/coproc_main.c", dev / "src/device/uart_npu/cmsis.c",
                           dev / "src/kernels/uart_npu/conv2d.c",
                           dev / "src/kernels/uart_npu/depthwise_conv2d.c",
                           rt / "coproc/protocol.c"],
                  [*kernel.include_dirs, tmp / "case", dev / "include", rt / "coproc",
                   rt / "kernels/portable"],
                  [*kernel.defines, "UART_NPU_MEMORY_SIZE=65536u", "UART_NPU_MEMORY_ALIGN=16u"],
                  link_uart=1, foreign=kernel.sources)
    # The same layers on the main board, for the figure without offload: CMSIS-NN's
    # kernels for the M4 when there is a tree, else the portable ones.
    tree = cmsis_nn_tree(None)
    if tree is None:
        image.sources += [rt / "kernels/portable/conv2d_s8.c",
                          rt / "kernels/portable/depthwise_conv2d_s8.c"]
    else:
        image.sources += [rt / "kernels/cmsis_nn/conv2d_s8.c",
                          rt / "kernels/cmsis_nn/depthwise_conv2d_s8.c"]
        image.include_dirs += [rt / "kernels/cmsis_nn", tree.root / "Include"]
        image.defines.append("CASE_CMSIS_NN")
        image.trees.append(tree)
    return _build(board.name, image, tmp / "main")


def _coproc_image(tmp: Path) -> Path:
    return _build("mps3_an547", coprocessor_image(board_by_name("mps3_an547"), 65536, 16),
                  tmp / "coproc")


def _outputs(stdout: str) -> dict[int, np.ndarray]:
    """Each run's output the firmware printed, by run number."""
    found: dict[int, list[int]] = {}
    current: list[int] | None = None
    for line in stdout.splitlines():
        m = re.match(r"tvmdev: output run(\d+) 0$", line)
        if m:
            current = found.setdefault(int(m[1]), [])
        elif line.startswith("tvmdev: data") and current is not None:
            current += [int(w, 16) for w in line.split()[2:]]
    return {k: np.array(v, dtype=np.uint8).view(np.int8) for k, v in found.items()}


def _run(tmp: Path, cli: Callable[..., Result], tflite_model: Callable[[str], Path],
         runs: int, fault: int = 0, fault_arg: int = 0,
         faults: tuple[Fault, ...] = ()) -> tuple[LinkedResult, list[np.ndarray]]:
    from coproc_case import build
    from tflm_ref import tensors

    need_module("tflite", "pip install -e '.[tflite]'")
    _need_everything()
    kws = tflite_model("keyword_spotting.tflite")
    case = build(kws, tensors, runs, fault, fault_arg, WAIT_MS)
    main = _main_image(tmp, cli, case.header)
    coproc = _coproc_image(tmp)
    run = LinkedRun(board_by_name("mps2_an386"), main, board_by_name("mps3_an547"), coproc)
    result = run.run(faults, timeout=120)
    return result, case.expected


def _check_balanced(out: str) -> None:
    m = re.search(r"opens=(\d+) closes=(\d+)", out)
    assert m is not None and m[1] == m[2], out[-3000:]
    assert "destroy TVM_DEVICE_OK" in out, out[-3000:]


def test_link_args_put_the_chardev_on_the_uart() -> None:
    board = board_by_name("mps3_an547")
    args = link_args(board, 1, "socket,id=link,path=/tmp/x")
    serials = [args[i + 1] for i, a in enumerate(args) if a == "-serial"]
    assert serials == ["stdio", "chardev:link", "null"]
    assert args[-2:] == ["-chardev", "socket,id=link,path=/tmp/x"]


@pytest.mark.slow
def test_keyword_spotting_layers_on_the_coprocessor(tmp_path: Path, cli: Callable[..., Result],
                                                    tflite_model: Callable[[str], Path]
                                                    ) -> None:
    """Three runs over the link, bit-exact with TFLM; the weights cross once."""
    result, expected = _run(tmp_path, cli, tflite_model, runs=3)
    out = result.main.stdout
    assert "init TVM_DEVICE_OK" in out, out[-3000:] + result.coproc_stdout[-2000:]
    assert len(re.findall(r"^run\d ticks=\d+ TVM_DEVICE_OK$", out, re.M)) == 3, out[-3000:]
    outputs = _outputs(out)
    assert sorted(outputs) == [0, 1, 2, 99], out[-3000:]  # 99: the layers run locally
    np.testing.assert_array_equal(outputs.pop(99), expected[0].reshape(-1))
    for run, got in outputs.items():
        np.testing.assert_array_equal(got, expected[run % 2].reshape(-1))
    first = re.search(r"bus first to_device=(\d+) from_device=(\d+)", out)
    steady = re.findall(r"bus steady to_device=(\d+) from_device=(\d+)", out)
    assert first is not None and len(steady) == 2
    # The first run carries the weights; the others only inputs, jobs and the output.
    assert int(first[1]) > int(steady[0][0]) + 7000 and steady[0] == steady[1]
    assert "coproc: ran kernel 1" in result.coproc_stdout
    _check_balanced(out)


@pytest.mark.slow
@pytest.mark.parametrize("fault,arg,code", [(FAULT_BAD_CRC, 0, "TVM_DEVICE_ERR_IO"),
                                            (FAULT_DELAY, 3 * WAIT_MS, "TVM_DEVICE_ERR_TIMEOUT")],
                         ids=["corrupted-answer", "late-answer"])
def test_a_faulty_answer_returns_its_code(fault: int, arg: int, code: str, tmp_path: Path,
                                          cli: Callable[..., Result],
                                          tflite_model: Callable[[str], Path]) -> None:
    result, expected = _run(tmp_path, cli, tflite_model, runs=1, fault=fault, fault_arg=arg)
    out = result.main.stdout
    assert f"faulted run {code}" in out, out[-3000:] + result.coproc_stdout[-2000:]
    assert "recovery run TVM_DEVICE_OK" in out, out[-3000:]
    outputs = _outputs(out)
    np.testing.assert_array_equal(outputs[max(outputs)], expected[0].reshape(-1))
    _check_balanced(out)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["killed", "dies"])
def test_coprocessor_gone_mid_inference(how: str, tmp_path: Path, cli: Callable[..., Result],
                                        tflite_model: Callable[[str], Path]) -> None:
    """The co-processor stops while it holds a job, then boots again: killed by the test
    (SIGKILL while its answer is delayed), or exiting by itself on the job (the DIE fault;
    the launcher boots it again). The run times out, the next reloads the weights and is
    bit-exact again."""
    if how == "killed":
        kill = (Fault(0.0, "restart", after="coproc: fault delay"),)
        fault, arg = FAULT_DELAY, 10 * WAIT_MS
    else:
        kill, fault, arg = (), FAULT_DIE, 0
    result, expected = _run(tmp_path, cli, tflite_model, runs=1, fault=fault, fault_arg=arg,
                            faults=kill)
    out = result.main.stdout
    assert len(result.coproc_returncodes) >= 2, result.coproc_stdout  # killed, and again
    assert "faulted run TVM_DEVICE_ERR_TIMEOUT" in out, out[-3000:]
    assert "recovery run TVM_DEVICE_OK" in out, out[-3000:] + result.coproc_stdout[-2000:]
    assert result.coproc_stdout.count("coproc: epoch") == 2
    outputs = _outputs(out)
    np.testing.assert_array_equal(outputs[max(outputs)], expected[0].reshape(-1))
    _check_balanced(out)


@pytest.mark.slow
def test_zephyr_qemu_cortex_m3_uart1_can_be_joined(tmp_path: Path) -> None:
    """Issue 23 asks whether Zephyr's qemu_cortex_m3 can take the co-processor too: its
    machine's UART1 is QEMU's second -serial, and bytes cross a socket chardev there both
    ways (checked bare metal: Zephyr's devicetree enables uart1, a ti,stellaris-uart)."""
    board = board_by_name("qemu_cortex_m3")
    cc = need_tool(board.toolchain.cc, "apt-get install gcc-arm-none-eabi")
    assert board.run.qemu is not None
    qemu = need_tool(board.run.qemu, "apt-get install qemu-system-arm")
    rt = runtime_dir() / "cortex_m"
    (tmp_path / "link.ld").write_text(
        "MEMORY { CODE (rx) : ORIGIN = 0x0, LENGTH = 0x40000\n"
        "         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 0x10000 }\nENTRY(Reset_Handler)\n"
        "SECTIONS { .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) . = ALIGN(4); } > CODE\n"
        " .data : { . = ALIGN(4); __data_start__ = .; *(.data*) . = ALIGN(4);"
        " __data_end__ = .; } > RAM AT > CODE\n __data_load__ = LOADADDR(.data);\n"
        " .bss (NOLOAD) : { . = ALIGN(4); __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4);"
        " __bss_end__ = .; } > RAM\n"
        " .stack (NOLOAD) : { . = ALIGN(8); . = . + 0x800; __stack_top__ = .; } > RAM }\n")
    elf = tmp_path / "uart1.elf"
    run_ok([cc, "-mcpu=cortex-m3", "-mthumb", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
            f"-I{rt}", str(REPO / "tests/c/lm3s_uart1.c"), str(rt / "startup.c"),
            str(rt / "semihosting.c"), f"-T{tmp_path / 'link.ld'}", "-nostartfiles",
            "--specs=nano.specs", "-o", str(elf)])
    with tempfile.TemporaryDirectory(prefix="tvmdev-lm3s-") as tmp:
        path = str(Path(tmp) / "s.sock")
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(1)
        args = list(board.run.args)  # the console, then UART1 on the socket
        at = args.index("-serial") + 2
        args[at:at] = ["-serial", "chardev:link"]
        proc = subprocess.Popen([qemu, *args, "-chardev", f"socket,id=link,path={path}",
                                 "-kernel", str(elf)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            server.settimeout(20)
            conn, _ = server.accept()
            conn.settimeout(20)
            data = b""
            while not data.endswith(b"\n"):
                data += conn.recv(64)
            conn.sendall(b"K")
            out, _ = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            server.close()
    assert data == b"lm3s6965evb UART1 says hello\n"
    assert "got K over UART1" in out and proc.returncode == 0, out


@pytest.mark.slow
def test_the_firmware_backend_runs_both_machines(tmp_path: Path) -> None:
    """Through the run backend (Job.coprocessor): an ordinary model on mps2_an386 with the
    co-processor booted beside it; the model's outputs still match numpy, and the
    co-processor's console was collected (it booted and listened)."""
    _need_everything()
    from tvmdev.load.model import load_model
    from tvmdev.run.backend import Coprocessor
    from tvmdev.run.job import execute, prepare

    coproc = _coproc_image(tmp_path)
    model = load_model(REPO / "examples/mlp/mlp.yaml")
    job = prepare(model, board_by_name("mps2_an386"), tmp_path / "b")
    job.backend.build(job)
    job.coprocessor = Coprocessor(board_by_name("mps3_an547"), coproc)
    result = execute(job)
    assert result.status == 0, result.stdout[-2000:]
    for name, want in result.reference.items():
        np.testing.assert_allclose(result.outputs[name], want, rtol=1e-5, atol=1e-5)
    assert "coproc: ready" in job.coproc_console


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m3", "cortex-m4", "cortex-m7", "cortex-m55"])
def test_interrupt_driven_uart_compiles_for_every_core(cpu: str, tmp_path: Path) -> None:
    """The UART driver in both modes and startup's interrupt table, -Wall -Wextra -Werror."""
    cc = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    rt = runtime_dir() / "cortex_m"
    base = [cc, f"-mcpu={cpu}", "-mthumb", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
            f"-I{rt}", f"-I{REPO / 'platforms/cmsis/include'}", "-DTVMDEV_UART_CLOCK=25000000",
            "-DTVMDEV_UART0_BASE=0x40004000", "-DTVMDEV_UART1_BASE=0x40005000",
            "-DTVMDEV_UART1_RX_IRQ=2", "-DTVMDEV_UART1_TX_IRQ=3"]
    for mode in ([], ["-DTVMDEV_IRQ_TABLE", "-DTVMDEV_UART1_INTERRUPTS"]):
        for src in ("cmsdk_uart.c", "startup.c"):
            run_ok([*base, *mode, "-c", str(rt / src), "-o", str(tmp_path / "x.o")])
