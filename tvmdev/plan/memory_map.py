"""Where the plan's pools go in the board's memory regions (``memory:`` in the board file).

A pool is a block of bytes the firmware is linked with: the workspace (tensors, kernel
scratch, state, and with ``--io workspace`` the model's inputs and outputs), the
constants, and any pool a later stage adds (a device's memory). Each goes to one region:
the one the user names (``--place-memory workspace=sram``), else the fastest (lowest
``rank``) whose kind holds it and whose bus masters include every master that reads it,
the program's own region first among equals. The program's regions keep room for what
the firmware itself puts there (its stack, its code: :data:`RAM_SLACK`, :data:`CODE_SLACK`)
when a pool has another region to go to; else a pool may use them to the last byte (the
linker has the last word, as in :mod:`.fit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import TvmdevError, Where, shown
from ..load.board import Board, Memory, Region

# The region kinds each access of a pool may live in: read-write pools in RAM, constants
# where the loader puts them (a code region or flash).
KINDS = {"rw": ("ram",), "ro": ("code", "flash")}
# Room kept in the program's regions for what the estimate does not count, when a pool can
# go elsewhere: the C library's and the devices' data, and the kernels' code.
RAM_SLACK = 4096
CODE_SLACK = 64 * 1024
_PLACE = re.compile(r"([a-z][a-z0-9_]*)=([a-z][a-z0-9_]*)")


@dataclass(frozen=True)
class Pool:
    """A block of bytes the plan puts in one region."""

    name: str  # workspace, constants, or a device memory's name
    size: int
    access: str = "rw"  # rw, or ro (loaded with the program, never written)
    masters: tuple[str, ...] = ("cpu",)  # who reads or writes it


@dataclass(frozen=True)
class Placed:
    pool: Pool
    region: Region
    asked: bool  # the user named the region (--place-memory)


@dataclass(frozen=True)
class MemoryMap:
    """Each pool's region, and what the program itself needs in its regions."""

    placed: tuple[Placed, ...]
    reserved: tuple[tuple[str, str, int], ...]  # (region, what, bytes)
    memory: Memory

    def region_of(self, pool: str) -> Region | None:
        """The region of pool ``pool``, or None."""
        return next((p.region for p in self.placed if p.pool.name == pool), None)

    def items(self, region: Region) -> list[tuple[str, int]]:
        """What goes into ``region``: the program's items, then the pools."""
        return ([(what, n) for r, what, n in self.reserved if r == region.name]
                + [(p.pool.name, p.pool.size) for p in self.placed if p.region == region])

    def used(self, region: Region) -> int:
        """The bytes ``region`` holds for certain."""
        return sum(n for _, n in self.items(region))


def parse_places(text: list[str] | None) -> tuple[tuple[str, str], ...]:
    """``--place-memory workspace=sram,constants=qspi`` (repeatable) as (pool, region)
    pairs; a pool named twice is refused."""
    out: dict[str, str] = {}
    for chunk in text or ():
        for item in chunk.split(","):
            m = _PLACE.fullmatch(item.strip())
            if m is None:
                raise TvmdevError(f"--place-memory: {shown(item)} is not POOL=REGION",
                                  hint="for example --place-memory workspace=sram,"
                                       "constants=qspi (tvmdev list boards --json shows regions)")
            if m[1] in out:
                raise TvmdevError(f"--place-memory names pool {m[1]} twice")
            out[m[1]] = m[2]
    return tuple(out.items())


def _n(v: int) -> str:
    return f"{v:,}"


def _candidates(pool: Pool, mem: Memory) -> list[Region]:
    """The regions that can hold ``pool``, fastest first, the program's own first among
    equals."""
    own = (mem.code, mem.ram)
    fit = [r for r in mem.regions
           if r.kind in KINDS[pool.access] and set(pool.masters) <= set(r.masters)]
    return sorted(fit, key=lambda r: (r.rank, r not in own, mem.regions.index(r)))


def _asked_region(pool: Pool, name: str, board: Board, mem: Memory) -> Region:
    region = mem.region(name)
    names = ", ".join(r.name for r in mem.regions)
    if region is None:
        raise TvmdevError(f"--place-memory: board {board.name} has no region {shown(name)}",
                          board.where, hint=f"its regions: {names}")
    if region not in _candidates(pool, mem):
        why = (f"a {region.kind} region" if region.kind not in KINDS[pool.access]
               else f"reached by {', '.join(region.masters)} only")
        raise TvmdevError(f"--place-memory: pool {pool.name} cannot go in region "
                          f"{region.name}: it is {why}", board.where,
                          hint="regions that can hold it: " + ", ".join(
                              r.name for r in _candidates(pool, mem)))
    return region


def place_pools(pools: list[Pool], board: Board, reserved: list[tuple[str, str, int]],
                asked: tuple[tuple[str, str], ...], where: Where | str | None) -> MemoryMap:
    """Put each pool in a region of ``board`` (see the module's docstring); a pool no
    region can hold is refused in one line."""
    mem = board.memory
    assert mem is not None
    known = {p.name for p in pools}
    for name, _ in asked:
        if name not in known:
            raise TvmdevError(f"--place-memory: no pool {shown(name)}",
                              hint="pools: " + ", ".join(sorted(known)))
    wanted = dict(asked)
    placed: list[Placed] = []
    used = {r.name: sum(n for rn, _, n in reserved if rn == r.name) for r in mem.regions}
    slack = {mem.code.name: CODE_SLACK, mem.ram.name: RAM_SLACK}
    for pool in sorted(pools, key=lambda p: p.name not in wanted):
        if pool.name in wanted:
            region = _asked_region(pool, wanted[pool.name], board, mem)
        else:
            cands = _candidates(pool, mem)
            fits = [r for r in cands if used[r.name] + pool.size <= r.length]
            roomy = [r for r in fits
                     if used[r.name] + pool.size + slack.get(r.name, 0) <= r.length]
            if not fits:
                raise _no_region(pool, board, cands, used, where)
            region = (roomy or fits)[0]
        used[region.name] += pool.size
        placed.append(Placed(pool, region, pool.name in wanted))
    return MemoryMap(tuple(placed), tuple(reserved), mem)


def _no_region(pool: Pool, board: Board, cands: list[Region], used: dict[str, int],
               where: Where | str | None) -> TvmdevError:
    if not cands:
        return TvmdevError(f"pool {pool.name} ({_n(pool.size)} bytes): board {board.name} "
                           f"has no {' or '.join(KINDS[pool.access])} region that "
                           f"{', '.join(pool.masters)} can reach", where,
                           hint="declare one under memory.regions in the board file")
    big = max(cands, key=lambda r: (r.length - used[r.name], r.length))
    return TvmdevError(
        f"pool {pool.name} ({_n(pool.size)} bytes) fits no region of board {board.name}: "
        f"the largest that can hold it, {big.name}, has {_n(big.length)} bytes "
        f"({_n(big.length - used[big.name])} free)", where,
        hint="a board with more memory (tvmdev list boards), or smaller "
             + ("activations (tvmdev aot --show-plan shows what is live at once)"
                if pool.access == "rw" else "constants (4-bit gemm weights: quantize: "
                "{bits: 4, block: 32} on the constant)"))
