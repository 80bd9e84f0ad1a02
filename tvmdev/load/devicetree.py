"""The memories a Zephyr build's devicetree chooses for the image, from the build's own
``zephyr/zephyr.dts`` (the devicetree after every include and overlay, as dtc prints it):
``chosen { zephyr,flash = &flash0; zephyr,sram = &sram0; }`` and those nodes' ``reg``.

A Zephyr board file's ``memory:`` map (the fit check's) is compared with them after each
build (tvmdev/run/zephyr.py), so the plan is checked against what Zephyr's linker script
really has, not only against the board file."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import TvmdevError

_CHOSEN = re.compile(r"\bchosen\s*\{([^}]*)\}", re.S)
_CELL = re.compile(r"0x[0-9a-fA-F]+|\d+")


def _node_body(text: str, label: str) -> str | None:
    """The node's own properties (children left out) of the node labelled ``label``."""
    found = re.search(rf"(?m)^\s*{re.escape(label)}:\s*[\w@,.-]+\s*\{{", text)
    if found is None:
        return None
    depth, own = 1, []
    for ch in text[found.end():]:
        depth += (ch == "{") - (ch == "}")
        if depth == 0:
            break
        if depth == 1 and ch not in "{}":
            own.append(ch)
    return "".join(own)


def chosen_memories(dts: Path) -> dict[str, tuple[int, int]]:
    """``{"flash": (origin, size), "sram": (origin, size)}`` for the chosen nodes that have
    a two-cell ``reg`` (a chosen memory missing from the devicetree is left out)."""
    text = dts.read_text(encoding="utf-8", errors="replace")
    chosen = _CHOSEN.search(text)
    out: dict[str, tuple[int, int]] = {}
    if chosen is None:
        return out
    for kind in ("flash", "sram"):
        ref = re.search(rf"zephyr,{kind}\s*=\s*&([\w-]+)\s*;", chosen[1])
        body = _node_body(text, ref[1]) if ref else None
        reg = re.search(r"\breg\s*=\s*<([^>]*)>", body) if body else None
        cells = [int(c, 0) for c in _CELL.findall(reg[1])] if reg else []
        if len(cells) == 2:
            out[kind] = (cells[0], cells[1])
    return out


def check_memory(dts: Path, board: str, code: tuple[int, int], ram: tuple[int, int],
                 board_file: str) -> None:
    """Refuse a board file whose ``memory:`` code or ram region is not inside the memory
    the devicetree chooses for flash or SRAM (one line, the sizes of both)."""
    found = chosen_memories(dts)
    for what, kind, (origin, length) in (("code", "flash", code), ("ram", "sram", ram)):
        if kind not in found:
            continue
        dt_origin, dt_size = found[kind]
        if origin < dt_origin or origin + length > dt_origin + dt_size:
            raise TvmdevError(
                f"board {board}: memory.{what} ({length:,} bytes at {origin:#x}) is not "
                f"inside Zephyr's chosen zephyr,{kind} ({dt_size:,} bytes at "
                f"{dt_origin:#x}, {dts})", board_file,
                hint=f"make memory.{what} the devicetree's zephyr,{kind} node's reg")
