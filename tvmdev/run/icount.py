"""Counting the instructions of one inference on a qemu-system Cortex-M board.

QEMU runs with ``-icount shift=0,align=off,sleep=off``: every guest instruction advances
its virtual clock by exactly 1 ns, independent of the host. SysTick, clocked by the
processor clock (CLKSOURCE=1, ``run.clock_hz`` in the board file), is a timer on that
clock, so one tick is ``1e9 / clock_hz`` instructions (40 on the 25 MHz MPS2 boards,
31.25 on the 32 MHz MPS3 AN547). The firmware (``runtime/cortex_m/icount.c``, built in
with ``-DTVMDEV_ICOUNT``, which also points startup.c's SysTick vector at the wrap
counter) starts SysTick just before ``tvmgen_<model>_run`` and reads the 64-bit tick
count right after, and prints ``tvmdev: icount ticks N``.

The count is of the instructions between the two reads of the counter: the run call
and a few instructions of the counter's own (fewer than one tick), and a wrap handler of
five instructions every 2^24 ticks. The tick's phase at the start is unknown, so the
count is within one tick (``resolution``) of the exact figure.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import TvmdevError
from ..load.board import Board
from ..resources import runtime_dir

OPTIONS = ("-icount", "shift=0,align=off,sleep=off")
DEFINE = "TVMDEV_ICOUNT"
NS_PER_INSTRUCTION = 1  # 2 ** shift
_LINE = re.compile(r"^tvmdev: icount ticks (\d+)$", re.M)
_IDLE = re.compile(r"^tvmdev: icount idle loops (\d+)$", re.M)
IDLE_LOOP = 4  # instructions of one loop of the harness's RTX5 idle thread


def unsupported(board: Board) -> str | None:
    """Why instructions cannot be counted on ``board``, or None when they can."""
    if board.run.method != "qemu-system":
        return (f"board {board.name} runs by {board.run.method}: instructions are counted "
                "only on qemu-system boards (bare-metal Cortex-M under QEMU -icount)")
    if board.run.clock_hz is None:
        return f"board {board.name} gives no run.clock_hz (the clock SysTick counts)"
    return None


def check(board: Board) -> None:
    """Raise the one-line reason when ``board`` cannot count instructions."""
    why = unsupported(board)
    if why is not None:
        raise TvmdevError(f"--instructions: {why}", board.where,
                          hint="boards that can: the mps2_* and mps3_* ones (tvmdev list boards)")


def source() -> Path:
    """The counter's C source (its header is beside it)."""
    return runtime_dir() / "cortex_m" / "icount.c"


def command(board: Board, exe: Path) -> list[str]:
    """The board's QEMU command line for ``exe``, with the icount options."""
    run = board.run
    if run.qemu is None:
        raise TvmdevError(f"board {board.name} has no run.qemu", str(board.path))
    return [run.qemu, *run.args, *OPTIONS, "-kernel", str(exe)]


def ticks(stdout: str) -> int | None:
    """The tick count a firmware printed (``tvmdev: icount ticks N``), or None."""
    found = _LINE.search(stdout)
    return int(found[1]) if found else None


def idle_loops(stdout: str) -> int | None:
    """The loops the RTX5 idle thread ran during the counted run (the CPU waiting for a
    device, such as a co-processor), or None when the firmware printed none."""
    found = _IDLE.search(stdout)
    return int(found[1]) if found else None


def last_run(stdout: str) -> tuple[int, int] | None:
    """Thread 0's last run's ticks and idle loops (RTX5, more than one iteration)."""
    found = re.search(r"^tvmdev: icount last run ticks (\d+) idle loops (\d+)$", stdout,
                      re.M)
    return (int(found[1]), int(found[2])) if found else None


def instructions(clock_hz: int, count: int) -> int:
    """Instructions in ``count`` SysTick ticks at ``clock_hz`` (rounded to the nearest)."""
    per = 10**9 // NS_PER_INSTRUCTION
    return (count * per + clock_hz // 2) // clock_hz


def resolution(clock_hz: int) -> int:
    """Instructions per tick, rounded up: how far a count may be from the exact one."""
    per = 10**9 // NS_PER_INSTRUCTION
    return -(-per // clock_hz)


def summary(clock_hz: int, count: int) -> str:
    """The line ``tvmdev run --instructions`` prints."""
    return (f"instructions per inference: {instructions(clock_hz, count):,} "
            f"(QEMU -icount, ±{resolution(clock_hz)})")


def idle_summary(clock_hz: int, count: int, loops: int) -> str:
    """The line that splits a count with idle time in it: the CPU's own work, and the
    instructions of the idle thread's loops while it waited."""
    idle = IDLE_LOOP * loops
    return (f"  of which the idle thread waiting: {idle:,} ({loops:,} loops); the CPU's own "
            f"work: {instructions(clock_hz, count) - idle:,}")
