"""Deterministic instruction counts of bare-metal firmware on tvmdev's qemu-system
Cortex-M boards (mps2_an385 M3, mps2_an386 M4, mps2_an500 M7, mps3_an547 M55), for
tvmdev's firmware and for any other firmware (the TFLM peer) measured the same way.

API (board: a board name or a loaded Board; elf: a Path)::

    qemu_command(board, elf) -> list[str]   # the board's run.args + ICOUNT_OPTIONS
    run_elf(board, elf, timeout=None) -> str    # stdout; RuntimeError unless exit 0
    clock_hz(board) -> int                  # the clock SysTick counts (run.clock_hz)
    to_instructions(board, ticks) -> int    # SysTick ticks -> instructions
    resolution(board) -> int                # instructions per tick: the count's ±
    printed_ticks(stdout) -> int | None     # the "tvmdev: icount ticks N" line
    C_SOURCES, C_INCLUDE, C_DEFINE          # the counter to build into a firmware
    calibrate(board, work_dir) -> list[tuple[int, int]]   # (exact, counted) pairs

In the firmware: compile ``C_SOURCES`` with ``-I C_INCLUDE``, call
``tvmdev_icount_start()`` right before the code to measure and
``tvmdev_icount_ticks()`` (uint64_t) right after, print the ticks, and point the vector
table's SysTick entry (index 15) at ``tvmdev_icount_systick_handler`` (tvmdev's
startup.c does with ``-DTVMDEV_ICOUNT``). Run it with ``run_elf`` and convert with
``to_instructions``.

The method: QEMU's ``-icount shift=0,align=off,sleep=off`` advances the virtual clock by
exactly 1 ns per guest instruction, whatever the host's speed. SysTick with CLKSOURCE=1
runs on the processor clock QEMU models (25 MHz on MPS2, 32 MHz on MPS3 AN547), as a
timer on that virtual clock, so a tick is 1e9 / clock_hz instructions: 40, or 31.25.
Its 24-bit wraps (every 2^24 ticks, 671 M instructions) are counted by the interrupt.
The count is within one tick of the exact count of instructions between the two
counter reads (the tick phase at the start is unknown).

What counts as an instruction: QEMU charges every instruction of a translated block, so
an instruction of an IT block whose condition fails counts, as in Arm's
"architecturally executed" (the PMU's INST_RETIRED). Unicorn's per-instruction hook
skips those: _cortex_m3_emu.run_firmware counts them only with ``failed=True`` (the
default, int8_bench.py's M3 figures, leaves them out; soft-float code has many).

Why it is trusted: ``calibrate`` runs a loop of exactly 2n instructions (inline asm,
``subs; bne``) for n up to 4 x 10^8 (800 M instructions, past a wrap) on a board and
checks ticks x (1e9 / clock_hz) against 2n, which checks the clock and the 1 ns per
instruction (tests/test_icount.py, every board). And the firmware of a model is
counted both ways on mps2_an385 (Cortex-M3): QEMU -icount, and Unicorn's exact count
of the same ``tvmgen_<model>_run`` call (_cortex_m3_emu.py); the two agree within one
tick (tests/test_icount.py, benchmarks/cmsis_nn_bench.py --check-m3).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tvmdev.load.board import Board, board_by_name  # noqa: E402
from tvmdev.run import icount  # noqa: E402

ICOUNT_OPTIONS = icount.OPTIONS
C_SOURCES = (icount.source(),)
C_INCLUDE = icount.source().parent
C_DEFINE = icount.DEFINE


def _board(board: str | Board) -> Board:
    return board_by_name(board) if isinstance(board, str) else board


def qemu_command(board: str | Board, elf: Path) -> list[str]:
    """The QEMU command line that runs ``elf`` on ``board`` with instruction counting."""
    return icount.command(_board(board), Path(elf))


def run_elf(board: str | Board, elf: Path, timeout: float | None = None) -> str:
    """Run ``elf`` on ``board`` under QEMU -icount; its stdout (the console UART). A
    non-zero exit status or a run past ``timeout`` (default: the board's run.timeout x 10,
    since -icount runs slower) is a RuntimeError."""
    b = _board(board)
    limit = timeout if timeout is not None else b.run.timeout * 10
    try:
        proc = subprocess.run(qemu_command(b, elf), capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{elf} did not finish in {limit:g} s on {b.name}") from None
    if proc.returncode != 0:
        raise RuntimeError(f"{elf} exited {proc.returncode} on {b.name}: "
                           + (proc.stdout + proc.stderr)[-1000:])
    return proc.stdout


def clock_hz(board: str | Board) -> int:
    """The processor clock SysTick counts on ``board`` (its run.clock_hz)."""
    b = _board(board)
    why = icount.unsupported(b)
    if why is not None:
        raise ValueError(why)
    assert b.run.clock_hz is not None
    return b.run.clock_hz


def to_instructions(board: str | Board, ticks: int) -> int:
    """Instructions in ``ticks`` SysTick ticks on ``board``."""
    return icount.instructions(clock_hz(board), ticks)


def resolution(board: str | Board) -> int:
    """Instructions per tick on ``board``, rounded up: a count is within this of exact."""
    return icount.resolution(clock_hz(board))


def printed_ticks(stdout: str) -> int | None:
    """The ticks a firmware printed as ``tvmdev: icount ticks N`` (None if it did not)."""
    return icount.ticks(stdout)


CALIBRATION_LOOPS = (1, 1000, 100_000, 10_000_000, 400_000_000)  # the last wraps
_CALIBRATION_C = r"""
#include <stdint.h>
#include "Driver_USART.h"
#include "icount.h"

extern ARM_DRIVER_USART Driver_USART%(uart)d;

static void put(const char *text)
{
    uint32_t n = 0;

    while (text[n] != '\0') {
        n++;
    }
    (void)Driver_USART%(uart)d.Send(text, n);
}

static void put_u64(uint64_t value)
{
    char text[24];
    int i = 23;

    text[i--] = '\0';
    do {
        text[i--] = (char)('0' + value %% 10U);
        value /= 10U;
    } while (value != 0U);
    put(&text[i + 1]);
}

/* Exactly 2 n instructions (n >= 1): subs and bne, n times. */
static inline void spin(uint32_t n)
{
    __asm__ volatile("1: subs %%0, %%0, #1\n\tbne 1b" : "+r"(n) : : "cc");
}

int main(void)
{
    static const uint32_t loops[] = {%(loops)s};
    uint32_t i;
    uint64_t empty, ticks;

    (void)Driver_USART%(uart)d.Initialize(0);
    (void)Driver_USART%(uart)d.PowerControl(ARM_POWER_FULL);
    for (i = 0; i < sizeof(loops) / sizeof(loops[0]); i++) {
        tvmdev_icount_start();
        empty = tvmdev_icount_ticks();
        tvmdev_icount_start();
        spin(loops[i]);
        ticks = tvmdev_icount_ticks();
        put("tvmdev: calibration ");
        put_u64(loops[i]);
        put(" ");
        put_u64(ticks - empty);
        put("\n");
    }
    return 0;
}
"""


def calibrate(board: str | Board, work_dir: Path,
              loops: tuple[int, ...] = CALIBRATION_LOOPS) -> list[tuple[int, int]]:
    """Build and run a firmware that counts loops of exactly 2n instructions on
    ``board``; returns (2n, instructions counted) for each n. A counter that works gives
    pairs within ``resolution(board)`` of each other."""
    from tvmdev.render.linker import linker_script
    from tvmdev.resources import platforms_dir

    b = _board(board)
    assert b.memory is not None
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    uart = b.support.console_uart
    (work / "main.c").write_text(_CALIBRATION_C % {
        "uart": uart, "loops": ", ".join(f"{n}U" for n in loops)})
    mem = b.memory
    (work / "link.ld").write_text(linker_script(mem, None, b.name,
                                                "/* icount calibration */"))
    elf = work / "calibration.elf"
    tc, sup = b.toolchain, b.support
    cmd = [tc.cc, *tc.cflags, *(f"-D{d}" for d in tc.defines),
           *(f"-D{k}={v}" for k, v in sup.defines), f"-D{C_DEFINE}",
           *(f"-I{d}" for d in (*sup.include, C_INCLUDE, platforms_dir() / "cmsis/include")),
           str(work / "main.c"), *(str(s) for s in (*sup.sources, *C_SOURCES)),
           f"-T{work / 'link.ld'}", "-o", str(elf), *tc.ldflags]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = run_elf(b, elf)
    pairs = []
    for line in out.splitlines():
        parts = line.split()
        if parts[:2] == ["tvmdev:", "calibration"]:
            pairs.append((2 * int(parts[2]), to_instructions(b, int(parts[3]))))
    if len(pairs) != len(loops):
        raise RuntimeError(f"the calibration firmware printed {len(pairs)} of "
                           f"{len(loops)} lines: {out[-500:]}")
    return pairs


if __name__ == "__main__":
    import tempfile

    for name in sys.argv[1:] or ("mps2_an385", "mps2_an386", "mps2_an500", "mps3_an547"):
        with tempfile.TemporaryDirectory() as tmp:
            found = calibrate(name, Path(tmp))
        worst = max(abs(a - b) for a, b in found)
        print(f"{name}: exact vs counted {found}; worst {worst} "
              f"(resolution ±{resolution(name)})")
