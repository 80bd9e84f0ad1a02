"""What a firmware build on a CMSIS-RTOS2 kernel compiles (``--rtos``): the kernel's
files from its pinned trees, the glue tvmdev writes (:mod:`tvmdev.render.rtos`), their
include folders and defines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..load.rtos import Rtos, core_of, locate_trees
from ..render.rtos import DEFAULT_HEAP, rtos_files
from ..write.files import sync


@dataclass
class RtosBuild:
    """The kernel part of a firmware build."""

    sources: list[Path] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    glue_dir: Path | None = None


def rtos_build(rtos: Rtos, cpu: str, board: str, clock_hz: int, glue_dir: Path,
               command: str, heap: int = DEFAULT_HEAP) -> RtosBuild:
    """Write the glue into ``glue_dir`` and list what the build compiles; the trees are
    found and pin-checked (an error with a clone hint where one is missing)."""
    core, files = core_of(rtos, cpu)
    roots = locate_trees(rtos)
    sync(glue_dir, rtos_files(rtos, core, files, board, clock_hz, command, heap))
    build = RtosBuild(glue_dir=glue_dir, defines=["_RTE_", *rtos.defines])
    build.include_dirs.append(glue_dir)
    for tree in rtos.trees:
        root = roots[tree.name]
        build.include_dirs += [root / i for i in tree.include]
        build.sources += [root / f for _, fs in tree.compile for f in fs]
    root = roots[files.tree]
    build.include_dirs += [root / i for i in files.include]
    build.sources += [root / f for f in files.files]
    build.sources.append(glue_dir / "tvmdev_rtos_glue.c")
    return build
