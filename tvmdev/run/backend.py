"""The run backend interface: how a board builds and runs a generated model.

A board's ``run.method`` names its backend. A backend renders its harness, builds the
program and runs it; everything before (planning, rendering the model and devices,
writing) is the pipeline's (:mod:`tvmdev.run.job`). Adding a way to run means adding
one subclass here and one board file.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..errors import TvmdevError
from ..inspect.stack import StackUsage
from ..load.board import Board
from ..model.graph import Model
from ..plan.devices import DevicePlan
from ..plan.pipeline import Compiled
from ..render.harness import Harness
from ..write.files import OutFile
from .trees import TreeBuild


@dataclass
class Job:
    """A model generated for a board: what a backend builds and runs."""

    model: Model  # with the board's offload applied
    board: Board
    backend: Backend
    build_dir: Path
    compiled: Compiled
    devices: DevicePlan
    inputs: dict[str, np.ndarray]
    exe: Path
    sources: list[Path] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    link_flags: list[str] = field(default_factory=list)
    # The pinned trees the build compiles (through the cache of :mod:`.trees`)
    trees: list[TreeBuild] = field(default_factory=list)
    stack: StackUsage | None = None  # firmware: the run's worst-case stack
    icount: bool = False  # firmware: count the run's instructions under QEMU -icount
    # firmware: a second machine joined to this one's UART (tvmdev.run.link), started
    # before the run and stopped after it; its console is kept in coproc_console.
    coprocessor: Coprocessor | None = None
    coproc_console: str = ""
    # What the run adds after staging, for a backend whose build files were written then
    # (west): sources, include folders (the device module's too) and Kconfig settings.
    added_sources: list[Path] = field(default_factory=list)
    added_includes: list[Path] = field(default_factory=list)
    kconfig: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Coprocessor:
    """A co-processor board and its firmware, linked UART to UART to the main board."""

    board: Board
    elf: Path
    main_uart: int = 1
    coproc_uart: int = 1


@dataclass(frozen=True)
class RunOptions:
    fault: str | None = None  # fn:nth:code, a failure the simulated devices inject
    threads: int = 1
    iterations: int = 1
    trace: bool = True  # write every operator's output, for the per-operator table
    cpu: str | None = None  # the CPU an emulator runs, when not the board's


@dataclass
class RawRun:
    """What a program printed and wrote, parsed."""

    proc: subprocess.CompletedProcess[str]
    status: int
    status_name: str
    devices: dict[str, dict[str, int]]
    outputs: dict[str, np.ndarray]
    trace_dir: Path | None = None
    failed_thread: int | None = None  # with several threads: the one that failed first


class Backend:
    """One way of building and running programs, chosen by a board's ``run.method``."""

    method: ClassVar[str] = ""
    builds_device_module: ClassVar[bool] = False  # the build system compiles devices
    fault_at_run_time: ClassVar[bool] = True  # else the fault is compiled in
    supports_threads: ClassVar[bool] = False
    # the firmware's threads and iterations are compiled in (TVMDEV_THREADS, as on an RTOS)
    threads_compiled_in: ClassVar[bool] = False
    kernel_builtin: ClassVar[bool] = False  # the program runs on an RTOS whatever the board
    emulates_cpu: ClassVar[bool] = False
    takes_cflags: ClassVar[bool] = True  # build() adds extra C flags to the board's
    tools: ClassVar[tuple[str, ...]] = ()  # programs it needs besides the compiler and QEMU
    registry: ClassVar[dict[str, type[Backend]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.method:
            Backend.registry[cls.method] = cls

    def __init__(self, board: Board) -> None:
        self.board = board

    def check_host(self) -> None:
        """The board can run here, and its compiler and emulator are installed."""
        import shutil

        board = self.board
        if board.run.requires == "macos" and sys.platform != "darwin":
            raise TvmdevError(f"board {board.name} runs on macOS only",
                              hint="its Metal code is built and run by the macOS workflow "
                                   "(.github/workflows/macos.yml)")
        for tool in (board.toolchain.cc, *([board.run.qemu] if board.run.qemu else []),
                     *self.tools):
            if shutil.which(tool) is None:
                raise TvmdevError(f"{tool} is not installed (needed for board {board.name})",
                                  hint="on Debian: bash scripts/test.sh installs every "
                                       "toolchain (as root)")

    def exe_path(self, build_dir: Path, model: Model) -> Path:
        """The program or image a build of ``model`` in ``build_dir`` makes: named after
        the model with a suffix, because a model's name (an identifier) may spell one of
        the build folder's own entries (``model/``, ``devices/``, ``run/``), none of
        which has a dot."""
        return build_dir / f"{model.name}.out"

    def harness_files(self, harness: Harness, job: Job) -> list[OutFile]:
        """The harness around the model (main.c, linker script, Zephyr glue)."""
        raise NotImplementedError

    def build(self, job: Job, fault: str | None = None,
              extra_cflags: tuple[str, ...] = ()) -> Path:
        """Build the program; ``fault`` is compiled in where the backend cannot pass it
        at run time, ``extra_cflags`` are added to the board's."""
        raise NotImplementedError

    def execute(self, job: Job, inputs: dict[str, np.ndarray], options: RunOptions) -> RawRun:
        """Run the built program on ``inputs`` and parse what it printed and wrote."""
        raise NotImplementedError

    def run_program(self, job: Job, argv: list[str], env: dict[str, str] | None = None
                    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` within the board's timeout; one clear error past it."""
        timeout = self.board.run.timeout
        try:
            return subprocess.run(argv, capture_output=True, text=True, env=env,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TvmdevError(f"the program did not finish in {timeout:g} s",
                              str(job.exe)) from None


def backend_for(board: Board) -> Backend:
    """The backend of ``board``'s run method."""
    from . import firmware, host, zephyr  # noqa: F401  (each registers its backends)

    return Backend.registry[board.run.method](board)


def failed_thread(stdout: str) -> int | None:
    """The thread that failed first, when a harness running several says so."""
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:3] == ["tvmdev:", "failed", "thread"] and len(parts) >= 4:
            return int(parts[3])
    return None


def parse_output(stdout: str) -> tuple[int, str, dict[str, dict[str, int]],
                                      dict[str, list[int]]]:
    """The status line, device counters and (firmware) output data a harness printed."""
    status, name = None, ""
    devices: dict[str, dict[str, int]] = {}
    data: dict[str, list[int]] = {}
    current: list[int] | None = None
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["tvmdev:", "status"] and len(parts) >= 3:
            status, name = int(parts[2]), (parts[3] if len(parts) > 3 else "")
        elif parts[:2] == ["tvmdev:", "device"] and len(parts) >= 3:
            devices.setdefault(parts[2], {}).update(
                {k: int(v) for k, v in (p.split("=") for p in parts[3:])})
        elif parts[:2] == ["tvmdev:", "output"] and len(parts) == 4:
            current = data.setdefault(parts[2], [])
        elif parts[:2] == ["tvmdev:", "data"] and current is not None:
            current.extend(int(w, 16) for w in parts[2:])
    if status is None:
        raise TvmdevError("the program printed no status line", hint=stdout[-2000:] or None)
    return status, name, devices, data
