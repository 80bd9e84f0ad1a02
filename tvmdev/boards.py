"""Boards: one YAML per board under ``boards/`` (cpu, platform, toolchain, how to run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import yamlio
from .errors import TvmdevError
from .resources import boards_dir

BOARD_KEYS = ("name", "description", "platform", "cpu", "aliases", "toolchain", "run",
              "kernels", "memory", "support", "offload")


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    platform: str
    cpu: str
    aliases: tuple[str, ...]
    cc: str
    cflags: tuple[str, ...]
    defines: tuple[str, ...]
    ldflags: tuple[str, ...]
    run: dict[str, Any]
    kernels: tuple[str, ...]
    memory: dict[str, Any]
    support: dict[str, Any]
    offload: dict[str, Any]
    folder: Path
    raw: dict[str, Any] = field(compare=False, default_factory=dict)

    @property
    def toolchain_tools(self) -> list[str]:
        """Programs a build and run on this board need."""
        tools = [self.cc]
        if "qemu" in self.run:
            tools.append(str(self.run["qemu"]))
        if self.run.get("method") == "west":
            tools.append("west")
        return tools


def _load(path: Path) -> Board:
    doc = yamlio.load(path)
    if not isinstance(doc, yamlio.LineDict):
        raise TvmdevError("a board must be a mapping", str(path))
    for key in doc:
        if key not in BOARD_KEYS:
            raise TvmdevError(f"unknown key '{key}'", doc.where(key),
                              hint="board keys: " + ", ".join(BOARD_KEYS))
    for key in ("name", "platform", "toolchain", "run"):
        if key not in doc:
            raise TvmdevError(f"board needs '{key}'", doc.where())
    tc = doc["toolchain"]
    return Board(
        name=str(doc["name"]), description=str(doc.get("description", "")),
        platform=str(doc["platform"]), cpu=str(doc.get("cpu", "")),
        aliases=tuple(doc.get("aliases") or ()), cc=str(tc["cc"]),
        cflags=tuple(tc.get("cflags") or ()), defines=tuple(tc.get("defines") or ()),
        ldflags=tuple(tc.get("ldflags") or ()), run=dict(doc["run"]),
        kernels=tuple(doc.get("kernels") or ()), memory=dict(doc.get("memory") or {}),
        support=dict(doc.get("support") or {}), offload=dict(doc.get("offload") or {}),
        folder=path.parent, raw=dict(doc))


@cache
def all_boards() -> dict[str, Board]:
    found: dict[str, Board] = {}
    for path in sorted(boards_dir().glob("*.yaml")):
        board = _load(path)
        found[board.name] = board
    return found


def get(name: str) -> Board:
    boards = all_boards()
    for b in boards.values():
        if name == b.name or name in b.aliases:
            return b
    raise TvmdevError(f"unknown board '{name}'", hint="known boards: " + ", ".join(boards))
