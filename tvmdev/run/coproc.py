"""The reference co-processor's firmware (runtime/coproc): built for a qemu-system board
(``mps3_an547``, a Cortex-M55) with the board's toolchain, startup, linker script and
interrupt-driven link UART, its kernels on CMSIS-NN when a tree is given (compiled through
the pinned-tree cache of :mod:`.trees`), else the portable ones.

The firmware is model-agnostic: only the size and alignment of its memory (the device
kind's declaration) are built in. :func:`build_image` is the same build for any
bare-metal program of a board (the main board's test firmware uses it too).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TvmdevError, log_excerpt
from ..load.board import Board, board_by_name
from ..load.kernel_tree import board_library
from ..load.tree import locate
from ..model.device import DeviceMemory
from ..plan.pipeline import Compiled
from ..render.device import status_header
from ..render.engine import banner
from ..render.linker import linker_script
from ..resources import platforms_dir, runtime_dir
from ..write.files import OutFile, sync
from .backend import Coprocessor, Job, backend_for
from .job import cmsis_drivers
from .trees import TreeBuild, compile_trees

# The CMSIS-NN sources the co-processor's two kernels reach (through arm_convolve_wrapper_s8
# and arm_depthwise_conv_wrapper_s8), by folder of the tree's Source/.
CMSIS_NN_FOLDERS = ("ConvolutionFunctions", "NNSupportFunctions", "TransposeFunctions")


@dataclass
class Image:
    """A bare-metal program for one board: what :func:`build_image` compiles."""

    name: str
    sources: list[Path]
    include_dirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    trees: list[TreeBuild] = field(default_factory=list)
    link_uart: int | None = None  # the UART built interrupt-driven
    # Third-party sources (an RTOS kernel's), compiled without -Werror and the C standard
    # flag, as the firmware harness compiles them.
    foreign: list[Path] = field(default_factory=list)


def build_image(board: Board, image: Image, build_dir: Path) -> Path:
    """Compile and link ``image`` for ``board`` into ``build_dir/<name>.elf`` with the
    board's startup (its device interrupts routed), semihosting and UART driver, its
    linker script and ``tvm/device/status.h``; skipped when nothing changed."""
    mem, tc = board.memory, board.toolchain
    if mem is None or board.run.method != "qemu-system":
        raise TvmdevError(f"board {board.name} runs no bare-metal firmware", board.where)
    build_dir = build_dir.resolve()
    sync(build_dir, [status_header("include/tvm/device/status.h", "tvmdev coproc"),
                     _link_script(board)])
    defines = [*tc.defines, *(f"{k}={v}" for k, v in board.support.defines), *image.defines]
    if image.link_uart is not None:
        defines += ["TVMDEV_IRQ_TABLE", f"TVMDEV_UART{image.link_uart}_INTERRUPTS"]
    # The image's folders first: an RTOS kernel's cmsis_os2.h before the stand-in one.
    includes = [*image.include_dirs, build_dir / "include", *board.support.include,
                platforms_dir() / "cmsis/include"]
    flags = [*tc.cflags, *(f"-D{d}" for d in defines), *(f"-I{i}" for i in includes)]
    objects = compile_trees(tc.cc, list(tc.cflags), image.trees)
    elf = build_dir / f"{image.name}.elf"
    sources = [*board.support.sources, *image.sources]
    lenient = [f for f in flags if f not in ("-Werror", "-std=c99")]
    cmds = [[tc.cc, *lenient, "-c", str(src), "-o", str(build_dir / f"{image.name}-f{i}.o")]
            for i, src in enumerate(image.foreign)]
    foreign = [c[-1] for c in cmds]
    cmds.append([tc.cc, *flags, *(str(s) for s in sources), *(str(o) for o in objects),
                 *foreign, f"-T{build_dir / 'link.ld'}", "-o", str(elf), *tc.ldflags])
    digest = hashlib.sha256("\n".join(" ".join(c) for c in cmds).encode())
    for path in [*sources, *image.foreign,
                 *(h for i in includes for h in sorted(i.glob("*.h")))]:
        digest.update(path.read_bytes())
    stamp = build_dir / f".{image.name}.stamp"
    if elf.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return elf
    for cmd in cmds:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise TvmdevError(f"the build of {image.name} failed ({tc.cc} exited "
                              f"{proc.returncode})", str(build_dir),
                              log=log_excerpt(proc.stderr, 40))
    stamp.write_text(digest.hexdigest())
    return elf


def _link_script(board: Board) -> OutFile:
    """The board's linker script, as the firmware harness writes it."""
    mem = board.memory
    assert mem is not None
    return OutFile("link.ld", linker_script(
        mem, None, board.name, banner("c", f"tvmdev coproc {board.name}", "owned")), "owned")


def cmsis_nn_tree(cmsis_nn: Path | None) -> TreeBuild | None:
    """CMSIS-NN's convolution sources from ``cmsis_nn`` (else $CMSIS_NN_SOURCE_DIR), or
    None without a tree."""
    tree = board_library("cmsis_nn").pinned()
    root = locate(tree, cmsis_nn)
    if root is None:
        return None
    sources = tuple(sorted(p for folder in CMSIS_NN_FOLDERS
                           for p in (root / "Source" / folder).glob("*.c")))
    return TreeBuild(tree, root, (("", sources),))


def coprocessor_image(board: Board, memory_size: int, memory_align: int,
                      cmsis_nn: Path | None = None, uart: int = 1) -> Image:
    """The co-processor firmware for ``board``: its memory, the link on ``uart``, and its
    kernels (CMSIS-NN when a tree is found, else portable)."""
    rt = runtime_dir()
    if uart not in board.support.accelerator_uarts:
        raise TvmdevError(f"board {board.name} has no accelerator UART{uart}", board.where)
    portable = rt / "kernels/portable"
    image = Image("coproc", [rt / "coproc/firmware.c", rt / "coproc/protocol.c"],
                  [rt / "coproc", portable],
                  [f"TVMDEV_COPROC_MEMORY_SIZE={memory_size}",
                   f"TVMDEV_COPROC_MEMORY_ALIGN={memory_align}",
                   f"TVMDEV_COPROC_USART=Driver_USART{uart}"], link_uart=uart)
    tree = cmsis_nn_tree(cmsis_nn)
    if tree is None:
        image.sources += [portable / "conv2d_s8.c", portable / "depthwise_conv2d_s8.c"]
    else:
        cm = rt / "kernels/cmsis_nn"
        image.sources += [cm / "conv2d_s8.c", cm / "depthwise_conv2d_s8.c"]
        image.include_dirs += [cm, *(tree.root / i for i in tree.tree.include)]
        image.defines.append("TVMDEV_COPROC_CMSIS_NN")
        image.trees.append(tree)
    return image


@dataclass(frozen=True)
class Linked:
    """A checked ``--coprocessor ID=BOARD``: the board, the kind's memory, the main board's
    UART the device is given."""

    board: Board
    memory: DeviceMemory
    main_uart: int


def check(compiled: Compiled, given: str) -> Linked:
    """``tvmdev run --coprocessor ID=BOARD``, checked before anything is written: device
    instance ID is of a --device-dir kind with memory of its own (its driver speaks
    runtime/coproc's protocol over a USART), the main board runs an RTOS (the driver waits
    on it), and BOARD takes the co-processor firmware."""
    name, sep, board_name = given.partition("=")
    hint = "--coprocessor ID=BOARD, e.g. --coprocessor npu0=mps3_an547"
    devices = compiled.model.devices
    dev = next((d for d in devices if d.name == name), None)
    if not sep or not board_name:
        raise TvmdevError(f"--coprocessor {given}: expected ID=BOARD", hint=hint)
    if dev is None:
        known = ", ".join(d.name for d in devices) or "none"
        raise TvmdevError(f"--coprocessor {given}: no device {name} in the model "
                          f"(devices: {known})", hint=hint)
    spec = next((s for s in compiled.options.device_specs if s.name == dev.kind), None)
    drivers = cmsis_drivers(compiled)
    if spec is None or spec.memory is None or drivers.get(dev.kind, "usart") != "usart":
        raise TvmdevError(f"--coprocessor {given}: device {name} is not of a --device-dir "
                          f"kind with memory of its own on a USART ({dev.kind})",
                          hint="generate it with tvmdev new-device KIND --memory SIZE:ALIGN "
                               "(examples/uart_npu/README.md)")
    if compiled.board.rtos is None and not backend_for(compiled.board).kernel_builtin:
        raise TvmdevError(f"--coprocessor {given}: the link's driver waits on the RTOS",
                          hint="run with --rtos rtx5 or --rtos freertos")
    coproc = board_by_name(board_name)
    if 1 not in coproc.support.accelerator_uarts:
        raise TvmdevError(f"--coprocessor {given}: board {board_name} has no accelerator "
                          f"UART1 for the co-processor's link", coproc.where)
    # The harness gives each USART device the board's accelerator UARTs in turn.
    usart = [d.name for d in devices if drivers.get(d.kind, "usart") == "usart"]
    uarts = compiled.board.support.accelerator_uarts
    if not uarts:
        raise TvmdevError(f"--coprocessor {given}: board {compiled.board.name} names no "
                          "accelerator UART for the link", compiled.board.where)
    return Linked(coproc, spec.memory, uarts[usart.index(name) % len(uarts)])


def attach(job: Job, linked: Linked) -> None:
    """Build the co-processor firmware for the kind's memory, add the protocol and the
    interrupt-driven link UART to the main board's build, and have the run start and stop
    both machines (:mod:`.link`)."""
    rt = runtime_dir()
    job.sources.append(rt / "coproc/protocol.c")
    job.include_dirs.append(rt / "coproc")
    job.defines += ["TVMDEV_IRQ_TABLE", f"TVMDEV_UART{linked.main_uart}_INTERRUPTS"]
    # Zephyr (files staged already): the protocol in the app, its header for the device
    # module, and the UART API's interrupts (the driver's link is interrupt-driven).
    job.added_sources.append(rt / "coproc/protocol.c")
    job.added_includes.append(rt / "coproc")
    job.kconfig.append("CONFIG_UART_INTERRUPT_DRIVEN=y")
    image = coprocessor_image(linked.board, linked.memory.size, linked.memory.alignment)
    elf = build_image(linked.board, image, job.build_dir / "coproc")
    job.coprocessor = Coprocessor(linked.board, elf, linked.main_uart, 1)


def bus_lines(stdout: str) -> list[str]:
    """What the device's driver counted on its bus (the harness's ``tvmdev: bus`` lines,
    cumulative, after each of thread 0's runs), as bytes per run each way, frames
    included; and each failed run the harness ran again (``tvmdev: faulted``)."""
    lines: list[str] = []
    to0 = from0 = 0
    for line in stdout.splitlines():
        m = re.match(r"tvmdev: bus run=(\d+) status=(-?\d+) to_device=(\d+) "
                     r"from_device=(\d+)$", line)
        if m:
            to1, from1 = int(m[3]), int(m[4])
            lines.append(f"  run {m[1]} status {m[2]}: {to1 - to0} to the device, "
                         f"{from1 - from0} back")
            to0, from0 = to1, from1
        m = re.match(r"tvmdev: faulted status (-?\d+) (\w+)$", line)
        if m:
            lines.append(f"  that run returned {m[1]} {m[2]}: run again (TVMDEV_RETRY)")
    if lines:
        lines.insert(0, "bytes on the bus per run, as the device's driver counted them "
                        "(frames included):")
    return lines
