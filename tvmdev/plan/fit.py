"""Whether a model fits a board's memory map (``memory:`` in the board file).

Checked when a run generates firmware for such a board, before anything is written, from
what the firmware reserves for certain:

* RAM: the workspace arena (tensors and kernel scratch), the model's state (its own
  region of the workspace, kept across runs), the output buffers the harness keeps, and
  the stack the linker script reserves (``memory.stack``);
* flash: the constants as the executor emits them (float32, or 4-bit data and bfloat16
  scales), the inputs the firmware compiles in, and a floor for the code: 2,048 bytes,
  less than the code and strings of the smallest firmware (a model of one relu: 2,328
  bytes of .text and .rodata on mps3_an547, 2,528 on mps2_an385).

A board that lists more regions than the program's two (``memory.regions``) has its pools
placed in them (:mod:`.memory_map`): then each region is checked on its own.

The rest (the kernels' code beyond that floor, the C library's and the devices' .data and
.bss: tens to hundreds of bytes) is left to the linker, so the estimate never refuses a
model that would fit; a model that passes it but does not link gets the same one line from
the linker's ``region overflowed`` message (:func:`link_overflow`).
"""

from __future__ import annotations

import re

from ..errors import TvmdevError
from ..load.board import Board, Memory
from ..model.graph import Model
from .memory import MemoryPlan
from .memory_map import MemoryMap, Pool, place_pools

CODE_FLOOR = 2048
# The regions of the firmware's linker script (templates/harness/firmware/link.ld.j2), and
# Zephyr's (FLASH, RAM).
REGIONS = {"CODE": "flash", "FLASH": "flash", "RAM": "RAM"}
_OVERFLOW = re.compile(r"region [`'\"]?(\w+)['\"]? overflowed by (\d+) bytes?")


def _n(value: int) -> str:
    return f"{value:,}"


def _parts(items: list[tuple[str, int]]) -> str:
    return " + ".join(f"{name} {_n(v)}" for name, v in items)


def _hint(ram_short: bool, flash_short: bool) -> str:
    hints = []
    if ram_short:
        hints.append("for RAM, a board with more (tvmdev list boards) or smaller activations "
                     "(the arena holds the tensors live at once; tvmdev aot writes their "
                     "sizes to plan.json)")
    if flash_short:
        hints.append("for flash, a board with more, or gemm weights in 4 bits "
                     "(quantize: {bits: 4, block: 32} on the constant)")
    return "; ".join(hints)


def constant_bytes(model: Model) -> int:
    """The bytes of constants the executor emits (unread ones are not)."""
    unread = model.unread_constants
    total = 0
    for name, arr in model.constants.items():
        if name in unread:
            continue
        q = model.quantized.get(name)
        total += int(q.data.nbytes + q.scales.nbytes) if q is not None else int(arr.nbytes)
    return total


def _estimate(model: Model, memory: MemoryPlan, mem: Memory, io: bool = False
              ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """What the firmware reserves for certain: RAM and flash, item by item (with ``io``,
    the outputs are in the arena)."""
    outputs = 0 if io else sum(model.tensors[n].nbytes for n in model.outputs)
    inputs = sum(model.tensors[n].nbytes for n in model.inputs)
    state = memory.state_region[1]
    ram = [("arena", memory.arena_size - state), *([("state", state)] if state else []),
           ("outputs", outputs), ("stack", mem.stack)]
    flash = [("constants", constant_bytes(model)), ("inputs", inputs),
             ("code at least", CODE_FLOOR)]
    return ram, flash


def _error(model: Model, board: Board, mem: Memory, ram: list[tuple[str, int]],
           flash: list[tuple[str, int]], note: str = "") -> TvmdevError:
    ram_need, flash_need = sum(v for _, v in ram), sum(v for _, v in flash)
    return TvmdevError(
        f"model {model.name} does not fit board {board.name}: it needs {_n(ram_need)} bytes "
        f"of RAM ({_parts(ram)}) and {_n(flash_need)} of flash ({_parts(flash)}); "
        f"the board has {_n(mem.ram.length)} of RAM and {_n(mem.code.length)} of flash{note}",
        model.path, hint=_hint(ram_need > mem.ram.length, flash_need > mem.code.length))


def pools(model: Model, memory: MemoryPlan, io: bool = False, params: int = 0
          ) -> list[Pool]:
    """The pools the firmware is linked with: the workspace (state included, and with
    ``io`` the model's inputs and outputs), the output buffers the harness keeps (none
    with ``io``: it prints them from the workspace), the constants and the inputs the
    firmware compiles in."""
    outputs = 0 if io else sum(model.tensors[n].nbytes for n in model.outputs)
    inputs = sum(model.tensors[n].nbytes for n in model.inputs)
    return [Pool("workspace", memory.arena_size),
            *([Pool("outputs", outputs)] if outputs else []),
            Pool("constants", constant_bytes(model) + params, "ro"),
            Pool("inputs", inputs, "ro")]


def _reserved(mem: Memory, code: int = CODE_FLOOR) -> list[tuple[str, str, int]]:
    """What the program itself puts in its regions: its code (a floor, or the estimate
    from the kernels' measured sizes), the stack."""
    return [(mem.code.name, "code at least", max(code, CODE_FLOOR)),
            (mem.ram.name, "stack", mem.stack)]


def check_fit(model: Model, memory: MemoryPlan, board: Board,
              asked: tuple[tuple[str, str], ...] = (), io: bool = False, code: int = 0,
              params: int = 0) -> MemoryMap | None:
    """Place the pools in ``board``'s regions, or raise the one-line error when ``model``
    cannot fit its memory map; None for a board without one. ``code``: the code estimate
    (:mod:`.code_size`; at least :data:`CODE_FLOOR` is reserved), ``params``: the bytes
    of the params structs' arrays, which go with the constants."""
    mem = board.memory
    if mem is None:
        if asked:
            raise TvmdevError(f"--place-memory: board {board.name} has no memory map",
                              board.where, hint="it places memory with a board that lists "
                                                "memory regions (tvmdev list boards)")
        return None
    if not mem.extra:  # the program's two regions: today's check, item by item
        ram, flash = _estimate(model, memory, mem, io)
        if (sum(v for _, v in ram) > mem.ram.length
                or sum(v for _, v in flash) > mem.code.length):
            raise _error(model, board, mem, ram, flash)
    placed = place_pools(pools(model, memory, io, params), board, _reserved(mem, code),
                         asked, model.path)
    for region in mem.regions:
        if placed.used(region) > region.length:
            raise TvmdevError(
                f"model {model.name} does not fit region {region.name} of board "
                f"{board.name}: it needs {_n(placed.used(region))} bytes "
                f"({_parts(placed.items(region))}); the region has {_n(region.length)}",
                model.path, hint="--place-memory puts a pool in another region")
    return placed


def link_overflow(stderr: str, model: Model, memory: MemoryPlan, board: Board,
                  io: bool = False, regions: MemoryMap | None = None) -> TvmdevError | None:
    """The linker's ``region `RAM' overflowed by N bytes`` (or CODE) as the fit check's
    one line, the overflowing region's need from the linker's figure (what the estimate
    leaves out shown as the rest); None when the link failed for another reason. With
    ``regions`` (a board that lists more regions), the line of the first region that
    overflowed, with what the plan put there."""
    mem = board.memory
    if mem is not None and mem.extra and regions is not None:
        return _region_overflow(stderr, model, board, regions)
    found = {m.group(1): int(m.group(2)) for m in _OVERFLOW.finditer(stderr)
             if m.group(1) in REGIONS}
    if mem is None or not found:
        return None
    ram, flash = _estimate(model, memory, mem, io)
    for kind, items, length in (("RAM", ram, mem.ram.length),
                                ("flash", flash, mem.code.length)):
        over = sum(v for r, v in found.items() if REGIONS[r] == kind)
        if over:
            items.append(("the rest", length + over - sum(v for _, v in items)))
    note = "".join(f" (the linker: region {r} overflowed by {_n(v)} bytes)"
                   for r, v in found.items())
    return _error(model, board, mem, ram, flash, note)


def _region_overflow(stderr: str, model: Model, board: Board, regions: MemoryMap
                     ) -> TvmdevError | None:
    """The linker's overflow of a region of the firmware's linker script (CODE and RAM:
    the program's; the others by their names in capitals, :mod:`tvmdev.render.linker`)."""
    mem = regions.memory
    labels = {"CODE": mem.code, "RAM": mem.ram, **{r.name.upper(): r for r in mem.extra}}
    found = [(labels[m.group(1)], m.group(1), int(m.group(2)))
             for m in _OVERFLOW.finditer(stderr) if m.group(1) in labels]
    if not found:
        return None
    region, label, over = found[0]
    items = regions.items(region)
    items.append(("the rest", region.length + over - sum(v for _, v in items)))
    return TvmdevError(
        f"model {model.name} does not fit region {region.name} of board {board.name}: it "
        f"needs {_n(region.length + over)} bytes ({_parts(items)}); the region has "
        f"{_n(region.length)} (the linker: region {label} overflowed by {_n(over)} bytes)",
        model.path, hint="--place-memory puts a pool in another region")
