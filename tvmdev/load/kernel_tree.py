"""Board kernel libraries built from a third-party tree (``runtime/kernels/<name>/``):
``library.yaml`` (schema ``kernel_tree``) says where the tree comes from and at which pin,
which code path each CPU gets, and how the tree's buffer sizes are probed;
``kernels.yaml`` is the library's registry entries. A board lists the ones it takes
under ``libraries:``; they come before the portable kernels.

The library's ``tree:`` is found and checked against its pin as every tree is
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
    """One board kernel library and the tree it is built from."""

    name: str
    description: str
    tree: Tree
    hooks: str | None  # its module of tvmdev.plan.hooks (decline, scratch, precompute)
    arch: dict[str, str]  # cpu -> code path: c, dsp or mve
    probe_source: Path  # tvmdev's host program that evaluates buffer sizes
    probe_tree_sources: tuple[str, ...]
    folder: Path
    kernels: Library

    def arch_of(self, cpu: str) -> str | None:
        """The code path ``cpu`` gets (None: the library does not serve the CPU)."""
        return self.arch.get(cpu)


@dataclass(frozen=True)
class ActiveLibrary:
    """A board library in use: its tree and the code path the board's CPU gets."""

    lib: TreeLibrary
    root: Path
    arch: str


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
    probe = doc["probe"]
    tree = load_tree(doc["tree"], str(path))
    if tree.name != doc["name"] or tree.sources is None:
        raise TvmdevError(f"library {doc['name']}: its tree must be named like it and give "
                          "its sources' folder", doc.where("tree"))
    return TreeLibrary(
        name=doc["name"], description=doc["description"], tree=tree,
        hooks=doc.get("hooks"), arch=dict(doc["arch"]),
        probe_source=folder / probe["source"], probe_tree_sources=tuple(probe["tree_sources"]),
        folder=folder,
        kernels=load_library(folder / "kernels.yaml", "board", name))


def activate(names: tuple[str, ...], cpu: str, given: dict[str, Path | str] | None = None,
             zephyr: bool = False) -> tuple[tuple[ActiveLibrary, ...], list[str]]:
    """The board libraries ``names`` in use on ``cpu``, each with its tree, and a note for
    each that is not (no tree, turned off, or not for this CPU). ``given``: a tree, or
    ``"off"``, by library name (``--cmsis-nn``); ``zephyr``: a Zephyr board (its
    workspace's module may be the tree)."""
    active, notes = [], []
    for name in names:
        lib = board_library(name)
        choice = (given or {}).get(name)
        flag = lib.tree.flag
        arch = lib.arch_of(cpu)
        if choice == OFF:
            notes.append(f"{name}: off ({flag} off); int8 operators use the portable kernels")
            continue
        if arch is None:
            notes.append(f"{name}: not for CPU {cpu}; int8 operators use the portable kernels")
            continue
        root = locate(lib.tree, None if choice is None else Path(choice), zephyr)
        if root is None:
            notes.append(f"{name}: no tree ({flag} PATH or {lib.tree.env}, "
                         f"{lib.tree.pin.tag}); int8 operators use the portable kernels")
            continue
        active.append(ActiveLibrary(lib, root, arch))
    return tuple(active), notes
