"""Pinned third-party source trees (CMSIS-NN, KleidiAI): one description, one lookup and
one pin check for every tree.

A tree is described under ``tree:`` in a board kernel library's ``library.yaml`` or a
platform's ``platform.yaml`` (schema ``tree``). It is never copied into tvmdev or into a
generated folder. It is found, first match wins, from an explicit path (``tvmdev run
--<name> PATH``), its environment variable, or a Zephyr workspace's module of its name
(a folder of ``ZEPHYR_MODULES``, or a project of ``$ZEPHYR_BASE/west.yml``), and it must
state the pinned release in its revision file. What a build compiles of it is cached
once for every tree (:mod:`tvmdev.run.trees`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from . import yamlio
from .schema import validate

CMSIS_REVISION = r"\$Revision:\s*(\S+)"  # the line CMSIS's file headers carry


@dataclass(frozen=True)
class Pin:
    repository: str
    tag: str
    commit: str | None
    revision_file: str  # a file of the tree, and the revision it states at the pin
    revision_pattern: str
    revision: str


@dataclass(frozen=True)
class Tree:
    """A third-party source tree a build compiles against."""

    name: str
    pin: Pin
    env: str  # the environment variable that points at it
    zephyr_module: str | None
    include: tuple[str, ...]  # its folders the sources and kernels include
    defines: tuple[str, ...]
    sources: str | None  # its C sources' folder: a build compiles those the kernels reach
    compile: tuple[tuple[str, tuple[str, ...]], ...]  # (flags, files): compiled, all of them

    @property
    def flag(self) -> str:
        """The option that gives the tree's path (``--cmsis-nn``)."""
        return "--" + self.name.replace("_", "-")

    @property
    def hint(self) -> str:
        """How to get the pinned tree."""
        return (f"check out {self.pin.repository} at {self.pin.tag} "
                f"(git clone --branch {self.pin.tag} {self.pin.repository}) and give "
                f"{self.flag} PATH or set {self.env}")


def load_tree(node: Any, file: str) -> Tree:
    """The ``tree:`` mapping of a library or platform file, checked."""
    validate(node, "tree", file)
    pin = node["pin"]
    rev = pin["revision"]
    return Tree(node["name"],
                Pin(pin["repository"], pin["tag"], pin.get("commit"), rev["file"],
                    rev.get("pattern", CMSIS_REVISION), rev["value"]),
                node["env"], node.get("zephyr_module"), tuple(node["include"]),
                tuple(node.get("defines") or ()), node.get("sources"),
                tuple((str(k), tuple(v)) for k, v in (node.get("compile") or {}).items()))


def locate(tree: Tree, given: Path | None, zephyr: bool = False) -> Path | None:
    """The tree: ``given``, else its environment variable, else (``zephyr``: a Zephyr
    board) its module of the Zephyr workspace; None when there is none. A given tree that
    is not one, or not at the pin, is refused; a Zephyr module at another release is
    passed over (None): the pin is what tvmdev's kernels are written for."""
    if given is not None:
        return check(tree, given, tree.flag)
    env = os.environ.get(tree.env)
    if env:
        return check(tree, Path(env), tree.env)
    module = zephyr_module(tree) if zephyr else None
    if module is not None and revision(tree, module) == tree.pin.revision:
        return check(tree, module, "the Zephyr module")
    return None


def zephyr_module(tree: Tree) -> Path | None:
    """The tree's Zephyr module, if the Zephyr workspace has one checked out."""
    if not tree.zephyr_module:
        return None
    for module in os.environ.get("ZEPHYR_MODULES", "").split(";"):
        if module and Path(module).name == tree.zephyr_module:
            return Path(module)
    base = os.environ.get("ZEPHYR_BASE")
    manifest = Path(base) / "west.yml" if base else None
    if manifest is None or not manifest.is_file():
        return None
    projects = ((yamlio.loads(manifest.read_text(), str(manifest)) or {}).get("manifest")
                or {}).get("projects") or []
    for project in projects:
        if isinstance(project, dict) and project.get("name") == tree.zephyr_module:
            path = Path(base or "").parent / str(project.get("path", project["name"]))
            return path if path.is_dir() else None
    return None


def revision(tree: Tree, root: Path) -> str | None:
    """The revision the tree's revision file states (None: no file, or no statement)."""
    path = root / tree.pin.revision_file
    if not path.is_file():
        return None
    found = re.search(tree.pin.revision_pattern, path.read_text(errors="replace"), re.M)
    return found.group(1) if found else None


def check(tree: Tree, root: Path, origin: str) -> Path:
    """``root`` as the tree: a folder with its headers and files, at the pinned release."""
    root = root.resolve()
    if not root.is_dir():
        raise TvmdevError(f"{origin}: no such folder", str(root), hint=tree.hint)
    wanted = [*(f"{i}/" for i in tree.include), *([f"{tree.sources}/"] if tree.sources else []),
              *(f for _, files in tree.compile for f in files)]
    missing = [w for w in wanted if not (root / w.rstrip("/")).exists()]
    if missing:
        raise TvmdevError(f"{origin}: not a {tree.name} tree ({missing[0]} is missing)",
                          str(root), hint=tree.hint)
    found = revision(tree, root)
    if found != tree.pin.revision:
        raise TvmdevError(f"{origin}: {tree.pin.revision_file} is revision "
                          f"{found or 'unknown'}, not {tree.pin.revision} of {tree.name} "
                          f"{tree.pin.tag}, which tvmdev's kernels are pinned to", str(root),
                          hint=tree.hint)
    return root
