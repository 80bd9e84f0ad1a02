"""Boards: one YAML file per board, checked by ``schemas/board.json`` and loaded into
typed dataclasses.

Boards come from tvmdev's own ``boards/`` folder, from the folders listed in
``TVMDEV_BOARD_PATH`` (``:``-separated; they take precedence), or from a path given
directly (``--board my_boards/evk.yaml``). Paths inside a board file are relative to
that file; ``${runtime}`` stands for tvmdev's shipped C sources (``runtime/``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import TvmdevError, Where, shown
from ..model.device import DeviceMemory
from ..model.ops import OPS
from ..model.scratch import Tuning
from ..resources import boards_dir, runtime_dir
from . import yamlio
from .kernel_tree import board_library_names
from .platform import all_platforms
from .schema import validate

BOARD_PATH_ENV = "TVMDEV_BOARD_PATH"


@dataclass(frozen=True)
class Toolchain:
    cc: str
    cflags: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()


REGION_KINDS = ("code", "ram", "flash")


@dataclass(frozen=True)
class Region:
    """One memory of the board's map. ``kind``: ``code`` is memory the program is loaded
    into and runs from (a TCM or an SSRAM: read-write too), ``ram`` read-write data
    (nothing loaded: zeroed or copied by the startup code), ``flash`` read-only once
    loaded. ``rank``: 0 is the fastest. ``masters``: the bus masters that reach it (cpu,
    dma, npu), for pools a device reads."""

    origin: int
    length: int
    name: str = ""
    kind: str = "ram"
    rank: int = 0
    masters: tuple[str, ...] = ("cpu",)

    @property
    def end(self) -> int:
        """The first address past the region."""
        return self.origin + self.length


@dataclass(frozen=True)
class Memory:
    """A microcontroller's memory map, for the linker script and the fit check: ``code``
    holds the program, ``ram`` its data and stack; ``extra`` are the board's other
    regions (``memory.regions``), where the plan may put its pools."""

    code: Region
    ram: Region
    stack: int = 0x4000
    extra: tuple[Region, ...] = ()

    @property
    def regions(self) -> tuple[Region, ...]:
        """Every region: the program's, then the others in the board file's order."""
        return (self.code, self.ram, *self.extra)

    def region(self, name: str) -> Region | None:
        """The region called ``name``, or None."""
        return next((r for r in self.regions if r.name == name), None)


@dataclass(frozen=True)
class RunSpec:
    """How programs run on the board: ``method`` names the run backend."""

    method: str
    timeout: float = 120.0
    requires: str | None = None  # a host OS the board needs ("macos")
    qemu: str | None = None
    args: tuple[str, ...] = ()
    cpu: str | None = None  # the CPU qemu-user emulates by default
    exe: str | None = None  # west: the program a native Zephyr build makes
    elf: str | None = None  # west: the image QEMU runs
    clock_hz: int | None = None  # qemu-system: the processor clock SysTick counts


@dataclass(frozen=True)
class Support:
    """Board support compiled into firmware: sources, includes and their macros."""

    sources: tuple[Path, ...] = ()
    include: tuple[Path, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    console_uart: int = 0
    accelerator_uarts: tuple[int, ...] = ()
    zephyr_board: str | None = None
    env: tuple[tuple[str, str], ...] = ()


# The alignment of the workspace and of every planned buffer without a cache to align to.
BASE_ALIGNMENT = 16


@dataclass(frozen=True)
class Cache:
    """The CPU's data cache, as buffers a device reads or writes by DMA must respect:
    cleaned and invalidated by whole lines, so aligned to one (``cache: {line: 32,
    dcache: true}``)."""

    line: int
    dcache: bool = True


@dataclass(frozen=True)
class Offload:
    """Operators no device runs that go to a device of ``kind`` named ``device``."""

    device: str
    kind: str
    ops: tuple[str, ...]
    metal_crossover_m: int | None = None
    memory: DeviceMemory | None = None  # the device's own (docs/device-memory.md)


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    platform: str
    cpu: str
    toolchain: Toolchain
    run: RunSpec
    path: Path  # the board file
    origin: str  # "built-in", a TVMDEV_BOARD_PATH folder, or "path"
    aliases: tuple[str, ...] = ()
    memory: Memory | None = None
    support: Support = field(default_factory=Support)
    kernels: tuple[Path, ...] = ()
    libraries: tuple[str, ...] = ()  # board kernel libraries by name (cmsis_nn)
    offload: Offload | None = None
    line: int = 0  # the line of its name in the board file
    tuning: Tuning = Tuning()  # the portable kernels' tuning for the CPU
    rtos: str | None = None  # the CMSIS-RTOS2 kernel the firmware runs on (rtx5, freertos)
    # options of the simulated devices a run generates (cmsis_driver: spi)
    device_options: tuple[tuple[str, str], ...] = ()
    cache: Cache | None = None  # the CPU's data cache, if it has one
    io: str = "caller"  # the model's I/O by default: in the workspace, or the caller's
    patch: str = "off"  # patch-based inference by default: auto (tvmdev.plan.patch) or off
    # bytes of flash each board library may add for what it lays out at generation time
    # (tvmdev_cm's widened 1x1 filters), by library name; a library not named adds none
    library_flash: tuple[tuple[str, int], ...] = ()

    def buffer_alignment(self, device: DeviceMemory | None = None) -> int:
        """The alignment of the workspace and of buffers a device reads or writes: 16
        bytes, or the data cache's line where there is one (cache maintenance works on
        whole lines), or the device memory's own alignment if larger."""
        cached = self.cache.line if self.cache is not None and self.cache.dcache else 0
        own = device.alignment if device is not None else 0
        return max(BASE_ALIGNMENT, cached, own)

    @property
    def where(self) -> Where:
        """The board file, as an error location."""
        return Where(str(self.path), self.line)


def _paths(items: Any, base: Path) -> tuple[Path, ...]:
    runtime = str(runtime_dir())
    return tuple((base / str(p).replace("${runtime}", runtime)).resolve()
                 if "${runtime}" not in str(p) else Path(str(p).replace("${runtime}", runtime))
                 for p in items or ())


def _check_paths(node: Any, what: str, base: Path, folders: bool = False) -> None:
    """Every path listed under ``what`` (``support.sources``) exists: files, or folders."""
    items = node.get(what.rpartition(".")[2]) if isinstance(node, dict) else None
    for i, (item, found) in enumerate(zip(items or (), _paths(items, base), strict=True)):
        if not (found.is_dir() if folders else found.is_file()):
            raise TvmdevError(f"{what}[{i}]: no such {'folder' if folders else 'file'}: "
                              f"{item}", yamlio.where_of(items, i),
                              hint="paths are relative to the board file")


def _library_flash(doc: Any) -> tuple[tuple[str, int], ...]:
    """The board's ``library_flash``: bytes by kernel library, each one the board lists."""
    given = doc.get("library_flash") or {}
    listed = _libraries(doc)
    for name in given:
        if str(name) not in listed:
            raise TvmdevError(f"library_flash: {shown(str(name))} is not one of the board's "
                              "libraries", yamlio.where_of(given, name),
                              hint="libraries: " + (", ".join(listed) or "none"))
    return tuple((str(k), int(v)) for k, v in given.items())


def _libraries(doc: Any) -> tuple[str, ...]:
    """The board's ``libraries``, each a kernel library tvmdev ships."""
    names = tuple(str(n) for n in doc.get("libraries") or ())
    known = board_library_names()
    for i, name in enumerate(names):
        if name not in known:
            raise TvmdevError(f"libraries[{i}]: unknown kernel library {shown(name)}",
                              yamlio.where_of(doc["libraries"], i),
                              hint="kernel libraries: " + (", ".join(known) or "none"))
    return names


def _region(node: dict[str, Any], name: str, kind: str) -> Region:
    return Region(int(node["origin"]), int(node["length"]), str(node.get("name", name)),
                  str(node.get("kind", kind)), int(node.get("rank", 0)),
                  tuple(str(m) for m in node.get("masters") or ("cpu",)))


def _memory(mem: Any) -> Memory | None:
    """The board's memory map; regions must have distinct names and must not overlap."""
    if not mem:
        return None
    out = Memory(_region(mem["code"], "code", "code"), _region(mem["ram"], "ram", "ram"),
                 int(mem.get("stack", 0x4000)),
                 tuple(_region(node, str(node["name"]), str(node["kind"]))
                       for node in mem.get("regions") or ()))
    seen: dict[str, Region] = {}
    for i, r in enumerate(out.regions):
        where = (yamlio.where_of(mem["regions"], i - 2) if i >= 2
                 else yamlio.where_of(mem, ("code", "ram")[i]))
        if r.name in seen:
            raise TvmdevError(f"memory: two regions are called {shown(r.name)}", where,
                              hint="give each region its own name")
        clash = next((o for o in seen.values() if r.origin < o.end and o.origin < r.end),
                     None)
        if clash is not None:
            raise TvmdevError(f"memory: region {r.name} ({r.origin:#x}..{r.end:#x}) overlaps "
                              f"region {clash.name} ({clash.origin:#x}..{clash.end:#x})",
                              where, hint="each address belongs to one region")
        if r.end > 1 << 32:
            raise TvmdevError(f"memory: region {r.name} ends past 4 GiB", where)
        seen[r.name] = r
    return out


def load_board(path: Path, origin: str = "path") -> Board:
    """Load and check one board file."""
    doc = yamlio.load(path)
    validate(doc, "board", str(path))
    platforms = all_platforms()
    if doc["platform"] not in platforms:
        raise TvmdevError(f"unknown platform {shown(doc['platform'])}", doc.where("platform"),
                          hint="known platforms: " + ", ".join(platforms))
    sup: Any = doc.get("support") or {}
    if sup.get("console_uart", 0) in (sup.get("accelerator_uarts") or ()):
        raise TvmdevError(f"UART {sup.get('console_uart', 0)} is the console and an "
                          "accelerator's", yamlio.where_of(sup, "accelerator_uarts"),
                          hint="support.console_uart must not be in "
                               "support.accelerator_uarts")
    base = path.parent
    _check_paths(doc, "kernels", base)
    _check_paths(sup, "support.sources", base)
    _check_paths(sup, "support.include", base, folders=True)
    off = doc.get("offload")
    unknown_ops = [op for op in (off or {}).get("ops", ()) if op not in OPS]
    if unknown_ops:
        raise TvmdevError(f"offload.ops: unknown op '{unknown_ops[0]}'",
                          off.where("ops"), hint="ops: " + ", ".join(OPS))
    tc, run = doc["toolchain"], doc["run"]
    if not math.isfinite(run.get("timeout", 120)):  # NaN passes every schema bound
        raise TvmdevError("run.timeout must be a number of seconds, not NaN",
                          yamlio.where_of(run, "timeout"))
    mem = doc.get("memory")
    return Board(
        name=doc["name"], description=doc["description"], platform=doc["platform"],
        cpu=doc["cpu"], path=path, origin=origin, aliases=tuple(doc.get("aliases") or ()),
        toolchain=Toolchain(tc["cc"], tuple(tc.get("cflags") or ()),
                            tuple(tc.get("defines") or ()), tuple(tc.get("ldflags") or ())),
        run=RunSpec(run["method"], float(run.get("timeout", 120)), run.get("requires"),
                    run.get("qemu"), tuple(run.get("args") or ()), run.get("cpu"),
                    run.get("exe"), run.get("elf"), run.get("clock_hz")),
        memory=_memory(mem),
        support=Support(_paths(sup.get("sources"), base), _paths(sup.get("include"), base),
                        tuple((str(k), str(v)) for k, v in (sup.get("defines") or {}).items()),
                        int(sup.get("console_uart", 0)),
                        tuple(sup.get("accelerator_uarts") or ()), sup.get("zephyr_board"),
                        tuple((str(k), str(v)) for k, v in (sup.get("env") or {}).items())),
        kernels=_paths(doc.get("kernels"), base),
        libraries=_libraries(doc),
        offload=Offload(off["device"], off["kind"], tuple(off["ops"]),
                        (off.get("gemm") or {}).get("metal_crossover_m"),
                        DeviceMemory(int(off["memory"]["size"]),
                                     int(off["memory"].get("alignment", 16)))
                        if off.get("memory") else None) if off else None,
        line=doc.where("name").line,
        tuning=Tuning(**doc.get("tuning") or {}),
        rtos=doc.get("rtos"),
        device_options=tuple((str(k), str(v)) for k, v in
                             (doc.get("device_options") or {}).items()),
        cache=Cache(int(doc["cache"]["line"]), bool(doc["cache"].get("dcache", True)))
        if doc.get("cache") else None,
        io=str(doc.get("io", "caller")), patch=str(doc.get("patch", "off")),
        library_flash=_library_flash(doc),
    )


def board_folders() -> list[tuple[Path, str]]:
    """Where boards are looked up, first match wins: TVMDEV_BOARD_PATH, then built-in."""
    folders = [(Path(p), p) for p in os.environ.get(BOARD_PATH_ENV, "").split(os.pathsep) if p]
    return [*folders, (boards_dir(), "built-in")]


@cache
def _boards_in(folder: Path, origin: str) -> tuple[Board, ...]:
    if not folder.is_dir():
        raise TvmdevError(f"{BOARD_PATH_ENV} names a folder that does not exist"
                          if not folder.exists() else f"{BOARD_PATH_ENV} names a file, "
                          "not a folder", str(folder))
    boards: dict[str, Board] = {}
    for path in sorted(folder.glob("*.yaml")):
        board = load_board(path, origin)
        if board.name in boards:
            raise TvmdevError(f"board '{board.name}' is also defined in "
                              f"{boards[board.name].path}", board.where,
                              hint="each board file of a folder needs its own name")
        boards[board.name] = board
    return tuple(boards.values())


def all_boards() -> dict[str, Board]:
    """Every board by name; a board in TVMDEV_BOARD_PATH hides a built-in one."""
    found: dict[str, Board] = {}
    for folder, origin in board_folders():
        for board in _boards_in(folder, origin):
            found.setdefault(board.name, board)
    return found


def board_by_name(name: str) -> Board:
    """A board by name or alias (``native_sim/native/64``), else a board file's path."""
    boards = all_boards()
    for b in boards.values():
        if name == b.name or name in b.aliases:
            return b
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        path = Path(name)
        if not os.path.lexists(path):  # a FIFO or a folder is reported by the reader
            raise TvmdevError("no such board file", name,
                              hint="--board takes a board name (tvmdev list boards) or a "
                                   "board file's path")
        return load_board(path)
    raise TvmdevError(f"unknown board {shown(name)}",
                      hint="known boards: " + ", ".join(sorted(boards)))
