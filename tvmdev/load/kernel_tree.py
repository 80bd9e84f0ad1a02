"""Board kernel libraries (``runtime/kernels/<name>/``): ``library.yaml`` (schema
``kernel_tree``) says which code path each CPU gets and, for a library built from a
third-party tree (cmsis_nn), where the tree comes from, at which pin, and how the tree's
buffer sizes are probed; ``kernels.yaml`` is the library's registry entries. A library
without a tree (tvmdev_cm, tvmdev's own) is its folder's sources alone. A board lists
the ones it takes under ``libraries:``, in precedence order; they come before the
portable kernels.

A library's ``tree:`` is found and checked against its pin as every tree is
(:mod:`.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import TvmdevError
from ..resources import runtime_dir
from . import yamlio
from .library import Library, load_library
from .schema import validate
from .tree import Tree, load_tree, locate

OFF = "off"  # --cmsis-nn off: the board's library is not used


@dataclass(frozen=True)
class TreeLibrary:
    """One board kernel library and the tree it is built from (None: its own sources)."""

    name: str
    description: str
    tree: Tree | None
    hooks: str | None  # its module of tvmdev.plan.hooks (decline, scratch, precompute)
    arch: dict[str, str]  # cpu -> code path: c, dsp or mve
    probe_source: Path | None  # tvmdev's host program that evaluates a tree's buffer sizes
    probe_tree_sources: tuple[str, ...]
    folder: Path
    kernels: Library

    def pinned(self) -> Tree:
        """The library's tree (a library that has one: it is in a build's trees)."""
        if self.tree is None:
            raise TvmdevError(f"internal error: library {self.name} has no tree")
        return self.tree

    def arch_of(self, cpu: str) -> str | None:
        """The code path ``cpu`` gets (None: the library does not serve the CPU)."""
        return self.arch.get(cpu)


@dataclass(frozen=True)
class ActiveLibrary:
    """A board library in use: its tree (None: a library without one) and the code path
    the board's CPU gets."""

    lib: TreeLibrary
    root: Path | None
    arch: str
    flash: int | None = None  # the bytes of flash the board lets it add (library_flash)


def board_library_names() -> tuple[str, ...]:
    """The board kernel libraries tvmdev ships."""
    root = runtime_dir() / "kernels"
    return tuple(sorted(p.parent.name for p in root.glob("*/library.yaml")))


@cache
def board_library(name: str) -> TreeLibrary:
    """Load and check ``runtime/kernels/<name>/library.yaml`` and its kernels."""
    folder = runtime_dir() / "kernels" / name
    path = folder / "library.yaml"
    doc = yamlio.load(path)
    validate(doc, "kernel_tree", str(path))
    probe = doc.get("probe") or {}
    tree = load_tree(doc["tree"], str(path)) if "tree" in doc else None
    if tree is not None and (tree.name != doc["name"] or tree.sources is None):
        raise TvmdevError(f"library {doc['name']}: its tree must be named like it and give "
                          "its sources' folder", doc.where("tree"))
    return TreeLibrary(
        name=doc["name"], description=doc["description"], tree=tree,
        hooks=doc.get("hooks"), arch=dict(doc["arch"]),
        probe_source=folder / probe["source"] if probe else None,
        probe_tree_sources=tuple(probe.get("tree_sources", ())),
        folder=folder,
        kernels=load_library(folder / "kernels.yaml", "board", name))


def activate(names: tuple[str, ...], cpu: str, given: dict[str, Path | str] | None = None,
             zephyr: bool = False, flash: tuple[tuple[str, int], ...] = ()
             ) -> tuple[tuple[ActiveLibrary, ...], list[str]]:
    """The board libraries ``names`` in use on ``cpu``, each with its tree, and a note for
    each that is not (no tree, turned off, or not for this CPU). ``given``: a tree, or
    ``"off"``, by library name (``--cmsis-nn``); ``zephyr``: a Zephyr board (its
    workspace's module may be the tree); ``flash``: the board's ``library_flash``."""
    active, notes = [], []
    for name in names:
        lib = board_library(name)
        choice = (given or {}).get(name)
        arch = lib.arch_of(cpu)
        if choice == OFF:
            flag = lib.tree.flag if lib.tree else "--library"
            notes.append(f"{name}: off ({flag} off); int8 operators use the portable kernels")
            continue
        if arch is None:
            notes.append(f"{name}: not for CPU {cpu}; int8 operators use the portable kernels")
            continue
        if lib.tree is None:
            active.append(ActiveLibrary(lib, None, arch, dict(flash).get(name)))
            continue
        flag = lib.tree.flag
        root = locate(lib.tree, None if choice is None else Path(choice), zephyr)
        if root is None:
            notes.append(f"{name}: no tree ({flag} PATH or {lib.tree.env}, "
                         f"{lib.tree.pin.tag}); int8 operators use the portable kernels")
            continue
        active.append(ActiveLibrary(lib, root, arch, dict(flash).get(name)))
    return tuple(active), notes
