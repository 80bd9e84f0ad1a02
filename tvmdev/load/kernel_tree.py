"""Board kernel libraries built from a third-party tree (``runtime/kernels/<name>/``):
``library.yaml`` (schema ``kernel_tree``) says where the tree comes from and at which pin,
which code path each CPU gets, and how the tree's buffer sizes are probed;
``kernels.yaml`` is the library's registry entries. A board lists the ones it takes
under ``libraries:``; they come before the portable kernels.

The tree is never copied into tvmdev or a generated folder. It is found, first match
wins, from an explicit path (``tvmdev run --cmsis-nn PATH``), the library's environment
variable, or a Zephyr workspace's module of the library's name (a folder of
``ZEPHYR_MODULES``); it is checked against the pin's release.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import TvmdevError
from ..resources import runtime_dir
from . import yamlio
from .library import Library, load_library
from .schema import validate

OFF = "off"  # --cmsis-nn off: the board's library is not used


@dataclass(frozen=True)
class Pin:
    repository: str
    tag: str
    commit: str
    revision_file: str  # a file of the tree, and the $Revision it states at the pin
    revision: str


@dataclass(frozen=True)
class TreeLibrary:
    """One board kernel library and the facts about its tree."""

    name: str
    description: str
    pin: Pin
    env: str
    zephyr_module: str | None
    include: tuple[str, ...]  # folders of the tree its sources and kernels include
    sources: str  # the folder of the tree's C sources
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
    pin, probe = doc["pin"], doc["probe"]
    return TreeLibrary(
        name=doc["name"], description=doc["description"],
        pin=Pin(pin["repository"], pin["tag"], pin["commit"], pin["revision"]["file"],
                pin["revision"]["value"]),
        env=doc["env"], zephyr_module=doc.get("zephyr_module"),
        include=tuple(doc["include"]), sources=doc["sources"], arch=dict(doc["arch"]),
        probe_source=folder / probe["source"], probe_tree_sources=tuple(probe["tree_sources"]),
        folder=folder,
        kernels=load_library(folder / "kernels.yaml", "board", name))


def locate_tree(lib: TreeLibrary, given: Path | None, zephyr: bool = False) -> Path | None:
    """The library's tree: ``given``, else its environment variable, else (``zephyr``: a
    Zephyr board) the module of its name in ``ZEPHYR_MODULES`` or in the Zephyr tree's
    module list (``$ZEPHYR_BASE/west.yml``); None when there is none. A given tree that
    is not one, or not at the pin, is refused; a Zephyr module at another release is
    passed over (None): the pin is what tvmdev's kernels are written for."""
    if given is not None:
        return check_tree(lib, given, "--" + lib.name.replace("_", "-"))
    env = os.environ.get(lib.env)
    if env:
        return check_tree(lib, Path(env), lib.env)
    module = zephyr_module(lib) if zephyr else None
    if module is not None and tree_revision(lib, module) == lib.pin.revision:
        return check_tree(lib, module, "the Zephyr module")
    return None


def zephyr_module(lib: TreeLibrary) -> Path | None:
    """The library's Zephyr module, if the Zephyr workspace has one checked out."""
    if not lib.zephyr_module:
        return None
    for module in os.environ.get("ZEPHYR_MODULES", "").split(";"):
        if module and Path(module).name == lib.zephyr_module:
            return Path(module)
    base = os.environ.get("ZEPHYR_BASE")
    manifest = Path(base) / "west.yml" if base else None
    if manifest is None or not manifest.is_file():
        return None
    projects = ((yamlio.loads(manifest.read_text(), str(manifest)) or {}).get("manifest")
                or {}).get("projects") or []
    for project in projects:
        if isinstance(project, dict) and project.get("name") == lib.zephyr_module:
            path = Path(base or "").parent / str(project.get("path", project["name"]))
            return path if path.is_dir() else None
    return None


def tree_revision(lib: TreeLibrary, root: Path) -> str | None:
    """The ``$Revision`` the tree's pin file states (CMSIS's file headers carry one)."""
    path = root / lib.pin.revision_file
    if not path.is_file():
        return None
    found = re.search(r"\$Revision:\s*(\S+)", path.read_text(errors="replace"))
    return found.group(1) if found else None


def check_tree(lib: TreeLibrary, root: Path, origin: str) -> Path:
    """``root`` as the library's tree: a folder with its headers, at the pinned release."""
    root = root.resolve()
    hint = (f"check out {lib.pin.repository} at {lib.pin.tag} "
            f"(git clone --branch {lib.pin.tag} {lib.pin.repository})")
    if not root.is_dir():
        raise TvmdevError(f"{origin}: no such folder", str(root), hint=hint)
    missing = [i for i in lib.include if not (root / i).is_dir()]
    if missing or not (root / lib.sources).is_dir():
        raise TvmdevError(f"{origin}: not a {lib.name} tree ({(missing or [lib.sources])[0]}/ "
                          "is missing)", str(root), hint=hint)
    revision = tree_revision(lib, root)
    if revision != lib.pin.revision:
        raise TvmdevError(f"{origin}: {lib.pin.revision_file} is revision "
                          f"{revision or 'unknown'}, not {lib.pin.revision} of {lib.name} "
                          f"{lib.pin.tag}, which tvmdev's kernels are pinned to", str(root),
                          hint=hint)
    return root


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
        flag = "--" + name.replace("_", "-")
        arch = lib.arch_of(cpu)
        if choice == OFF:
            notes.append(f"{name}: off ({flag} off); int8 operators use the portable kernels")
            continue
        if arch is None:
            notes.append(f"{name}: not for CPU {cpu}; int8 operators use the portable kernels")
            continue
        root = locate_tree(lib, None if choice is None else Path(choice), zephyr)
        if root is None:
            notes.append(f"{name}: no tree ({flag} PATH or {lib.env}, {lib.pin.tag}); int8 "
                         "operators use the portable kernels")
            continue
        active.append(ActiveLibrary(lib, root, arch))
    return tuple(active), notes
