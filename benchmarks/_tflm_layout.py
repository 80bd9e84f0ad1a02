"""Where the TFLM peer's firmware (benchmarks/_tflm_build.py) puts the model, its inputs
and TFLM's arena on a board, and the linker script that says so.

The program's own regions (the board's ``code`` and ``ram``) hold them when the model and
the inputs fit beside TFLM's code (CODE_ROOM left for it), as before. A larger model, on a
board that lists other memories (``memory.regions``), goes where an application would put
it, and where tvmdev's plan puts its constants (README, "Boards"): the model and the
inputs in the largest ``flash`` or ``code`` region (mps3_an547's QSPI flash), the arena in
the largest ``ram`` region (its DDR), up to LARGE_ARENA bytes. QEMU's ``-icount`` counts
instructions, not memory cycles: where the bytes are does not change the count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvmdev.load.board import Board, Region

HERE = Path(__file__).resolve().parent
ARENA_BYTES = 256 * 1024
# What TFLM's core, its kernels, CMSIS-NN and the harness take of the code region, at most
# (the signal library's firmware, the largest, links about 95 KB).
CODE_ROOM = 160 * 1024
LARGE_ARENA = 16 * 1024 * 1024


@dataclass(frozen=True)
class Layout:
    model_region: Region  # the model and the inputs
    arena_region: Region
    arena: int  # the arena's bytes


def arena_bytes(board: Board) -> int:
    """The arena in the program's RAM: ARENA_BYTES, or more on a board whose RAM holds more
    (the board's RAM less its stack and 64 KiB for the rest), for the larger models."""
    assert board.memory is not None
    room = board.memory.ram.length - board.memory.stack - 64 * 1024
    return max(ARENA_BYTES, room // 16 * 16)


def layout(board: Board, stored: int) -> Layout:
    """The layout for a model and inputs of ``stored`` bytes on ``board``."""
    mem = board.memory
    assert mem is not None
    if stored + CODE_ROOM <= mem.code.length or not mem.extra:
        return Layout(mem.code, mem.ram, arena_bytes(board))
    flash = [r for r in mem.extra if r.kind in ("flash", "code") and "cpu" in r.masters]
    ram = [r for r in mem.extra if r.kind == "ram" and "cpu" in r.masters]
    model = max(flash, key=lambda r: r.length, default=mem.code)
    arena = max(ram, key=lambda r: r.length, default=mem.ram)
    size = arena_bytes(board) if arena is mem.ram else min(arena.length, LARGE_ARENA)
    return Layout(model, arena, size // 16 * 16)


def _label(board: Board, r: Region) -> str:
    assert board.memory is not None
    if r is board.memory.code:
        return "CODE"
    if r is board.memory.ram:
        return "RAM"
    return r.name.upper()


def link_script(board: Board, lay: Layout) -> str:
    """tflm_peer/link.ld.in for ``board`` with ``lay``'s regions."""
    mem = board.memory
    assert mem is not None
    extra = {_label(board, r): r for r in (lay.model_region, lay.arena_region)
             if r is not mem.code and r is not mem.ram}
    memory = "".join(f"    {name} ({'r' if r.kind == 'flash' else 'rwx'}) : "
                     f"ORIGIN = {r.origin:#x}, LENGTH = {r.length:#x}\n"
                     for name, r in extra.items())
    return (HERE / "tflm_peer" / "link.ld.in").read_text().format(
        board=board.name, code_origin=mem.code.origin, code_length=mem.code.length,
        ram_origin=mem.ram.origin, ram_length=mem.ram.length, stack=mem.stack,
        extra_memory=memory, model_region=_label(board, lay.model_region),
        arena_region=_label(board, lay.arena_region))
