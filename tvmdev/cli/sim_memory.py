"""``tvmdev run --device-option memory=SIZE[:ALIGN]`` and ``async=on``: tvmdev's simulated
devices with memory of their own (docs/device-memory.md), and what a run says of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import TvmdevError
from ..load.board import Board
from ..load.platform import platform_by_name
from ..model.device import DeviceMemory, parse_memory
from ..model.graph import Model
from ..plan.pipeline import Compiled

_HINT = ("SIZE[:ALIGN] in bytes, K or M, alignment a power of two: for example "
         "--device-option memory=256K or memory=256K:32")


@dataclass(frozen=True)
class SimMemory:
    """What ``--device-option`` asked of the simulated devices' memory."""

    memory: DeviceMemory | None
    asynchronous: bool  # every copy and kernel returns TVM_DEVICE_PENDING
    rest: tuple[str, ...]  # the platform's own options


def split_options(given: Sequence[str]) -> SimMemory:
    """``memory=`` and ``async=`` out of ``--device-option``'s values."""
    memory, asynchronous, rest = None, False, []
    for text in given:
        name, _, value = text.partition("=")
        if name == "memory":
            memory = parse_memory(value, option="--device-option memory=", hint=_HINT)
        elif name == "async":
            if value not in ("on", "off"):
                raise TvmdevError(f"--device-option {text}: async is on or off",
                                  hint="--device-option async=on")
            asynchronous = value == "on"
        else:
            rest.append(text)
    if asynchronous and memory is None:
        raise TvmdevError("--device-option async=on: only devices with memory complete "
                          "asynchronously", hint=_HINT)
    return SimMemory(memory, asynchronous, tuple(rest))


def kinds_with_memory(model: Model, board: Board, memory: DeviceMemory | None,
                      user: Sequence[str]) -> tuple[tuple[str, DeviceMemory], ...]:
    """Every device kind tvmdev simulates for the run (not the user's), with ``memory``
    (default: the memory the board's offload device declares, for its kind); refused on a
    board whose platform has no simulated accelerator."""
    if memory is None:
        off = board.offload
        if off is None or off.memory is None or off.kind in user:
            return ()
        if not platform_by_name(board.platform).simulated_memory:
            raise TvmdevError(f"offload.memory: board {board.name}'s simulated "
                              f"{board.platform} devices have no memory of their own",
                              board.where)
        return ((off.kind, off.memory),)
    if not platform_by_name(board.platform).simulated_memory:
        raise TvmdevError(f"--device-option memory=: board {board.name}'s simulated "
                          f"{board.platform} devices have no memory of their own",
                          hint="give the memory to tvmdev's simulated devices on the host or "
                               "a cmsis board (mps2_an385, mps2_an386, ...)")
    offload = [board.offload.kind] if board.offload else []
    kinds = [*model.kinds, *offload]
    return tuple((k, memory) for k in dict.fromkeys(kinds) if k not in user)


def memory_lines(compiled: Compiled) -> list[str]:
    """The pools and the bytes a run copies, one line each."""
    plan = compiled.device_memory
    if plan is None:
        return []
    m = compiled.model
    lines = [f"device {p.device}: pool {p.size} of {p.capacity} bytes (lower bound "
             f"{p.lower_bound}, ratio {p.ratio:.3f}); constants {p.constant_region[1]} "
             f"bytes, loaded once" for p in plan.pools]
    lines.append(f"bytes on the bus per run: {plan.bytes_copied(m, 'copy_to')} to the "
                 f"devices, {plan.bytes_copied(m, 'copy_from')} back; "
                 f"{plan.bytes_loaded(m)} of constants per load")
    return lines
