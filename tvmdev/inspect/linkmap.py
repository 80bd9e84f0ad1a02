"""What the linker removed: GNU ld's map file (``-Wl,-Map=<name>.map``, which tvmdev's
firmware builds and Zephyr's write beside the ELF) lists under "Discarded input sections"
every input section ``--gc-sections`` dropped. Compiled with ``-ffunction-sections``,
each function has a section of its own, ``.text.<name>``: a function listed there was
compiled and linked, then removed because nothing calls it. A function an ELF lacks that
the map does not list was never there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..reading import read_bytes

_DISCARDED = "Discarded input sections"
# GCC's sections for functions it moved by their heat or role keep the name last.
_TEXT_PREFIXES = (".text.unlikely.", ".text.hot.", ".text.startup.", ".text.exit.", ".text.")
# "  0x00000650   TVMDeviceWooflesInit": a symbol the memory map places (not a section's
# line, which has a size and a file, nor an assignment, which has "=").
_PLACED = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+([A-Za-z_][A-Za-z0-9_.$]*)\s*$", re.M)


@dataclass(frozen=True)
class LinkMap:
    """A map file: the functions whose sections were discarded, and the address of every
    symbol it places (to tell that it belongs to the ELF at hand)."""

    path: Path
    removed: frozenset[str]
    placed: dict[str, int]


def map_beside(elf: Path) -> Path | None:
    """The map file a build wrote beside ``elf`` (``mlp.elf`` -> ``mlp.map``), if any."""
    path = elf.with_suffix(".map")
    return path if path != elf and path.is_file() else None


def read_link_map(path: Path) -> LinkMap:
    """The removed functions and the placed symbols of a GNU ld map file."""
    text = read_bytes(path, "linker map").decode("utf-8", "replace")
    start = text.find(_DISCARDED)
    end = text.find("\nMemory Configuration", max(start, 0))
    discarded = text[start:end] if start >= 0 and end >= 0 else ""
    removed = set()
    for line in discarded.splitlines():
        section = line.split()[0] if line.startswith(" .text.") else ""
        prefix = next((p for p in _TEXT_PREFIXES if section.startswith(p)), "")
        if prefix and len(section) > len(prefix):
            removed.add(section[len(prefix):])
    memory_map = text[end:] if end >= 0 else ""
    placed = {m[2]: int(m[1], 16) for m in _PLACED.finditer(memory_map)}
    return LinkMap(path, frozenset(removed), placed)


def belongs_to(link_map: LinkMap, functions: dict[str, int]) -> bool:
    """Whether the map is the one the linker wrote with the ELF whose defined functions
    are ``functions`` (name -> address, without the Thumb bit): every function both name
    is at the same address, and there is at least one."""
    both = functions.keys() & link_map.placed.keys()
    return bool(both) and all(link_map.placed[n] == functions[n] for n in both)


def link_map_of(elf: Path, functions: dict[str, int]) -> tuple[LinkMap | None, str | None]:
    """The map beside ``elf`` when the same link wrote it (:func:`belongs_to`), else
    None; and when there is a map that is not read, why."""
    path = map_beside(elf)
    if path is None:
        return None, None
    link_map = read_link_map(path)
    if not belongs_to(link_map, functions):
        return None, f"{path.name} is not this ELF's linker map (its addresses differ): not read"
    return link_map, None
