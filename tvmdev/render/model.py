"""Everything a compiled model's folder holds, so that it builds on its own: the executor
and its plan, the status header its header includes, copies of the kernels it calls and
of the headers those include (nothing else), ``tvmgen_<model>.cmake`` listing the
model's sources, include folders and macros (what a Zephyr application includes), and a
CMakeLists.txt that makes a static library of each model of the folder.

``tvmdev aot`` writes these files; ``tvmdev run`` writes the same bytes under ``model/``
and builds from them. No path of the generating machine appears in any of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..load.kernel_tree import board_library
from ..plan.pipeline import Compiled
from ..resources import runtime_dir
from ..write.files import OutFile
from .custom_op import custom_op_files
from .device import status_header
from .engine import banner, render
from .executor import executor_files
from .kernel_tree import tree_files
from .rtos_folder import rtos_folder_files

STATUS_HEADER = "tvm/device/status.h"
# What the banners of the files every model of a folder shares record.
FOLDER_COMMAND = "tvmdev aot; shared by the models of this folder"
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


@dataclass(frozen=True)
class Layout:
    """Where the copied kernel files of a compiled model go in its folder."""

    copies: dict[Path, str]  # a shipped source or header -> its path in the folder
    sources: tuple[str, ...]  # the folder's C sources the executor needs (no tree's)
    include: tuple[str, ...]  # the folder's include folders ("" is the folder itself)

    def source_paths(self, root: Path) -> list[Path]:
        """The C sources, under ``root``."""
        return [root / s for s in self.sources]

    def include_paths(self, root: Path) -> list[Path]:
        """The include folders, under ``root``."""
        return [root / i if i else root for i in self.include]

    def mapped(self, source: Path, root: Path) -> Path:
        """Where a shipped ``source`` is copied under ``root`` (itself when it is not)."""
        rel = self.copies.get(source.resolve())
        return root / rel if rel is not None else source


def _closure(files: list[Path], folders: list[Path]) -> list[Path]:
    """``files`` and every local header they include, found in ``folders``."""
    out = list(dict.fromkeys(f.resolve() for f in files))
    todo = list(out)
    while todo:
        for name in _LOCAL_INCLUDE.findall(todo.pop().read_text(encoding="utf-8")):
            found = next((d / name for d in folders if (d / name).is_file()), None)
            if found is not None and found.resolve() not in out:
                out.append(found.resolve())
                todo.append(found.resolve())
    return out


def layout(compiled: Compiled) -> Layout:
    """The copies of the shipped kernels the executor calls, and what a build of the
    folder compiles and includes."""
    portable = (runtime_dir() / "kernels/portable").resolve()
    libraries = {portable: "kernels/portable"}
    for name in compiled.own_libraries():
        libraries[board_library(name).folder.resolve()] = f"kernels/{name}"
    shipped = [k for k in compiled.kernels if k.include_dir.resolve() in libraries]
    sources = sorted({s.resolve() for k in shipped for s in k.sources})
    headers = [k.include_dir / k.header for k in shipped]
    files = _closure([*sources, *headers, portable / "tvmk_portable.h"], list(libraries))
    copies = {f: f"{libraries[f.parent]}/{f.name}" for f in files if f.parent in libraries}
    ordered = dict(sorted(copies.items(), key=lambda kv: kv[1]))
    used = sorted({libraries[s.parent] for s in sources} | {"kernels/portable"})
    return Layout(ordered, tuple(ordered[s] for s in sources if s in ordered),
                  ("", *used))


def model_files(compiled: Compiled, command: str) -> list[OutFile]:
    """Every file of the compiled model's folder (``command``: what the banners record)."""
    m = compiled.model
    lay = layout(compiled)
    files = executor_files(compiled, command)
    files.append(status_header(STATUS_HEADER, FOLDER_COMMAND))
    files += custom_op_files(compiled, command)
    board_dirs = {f"kernels/{n}" for n in compiled.board_libraries()}
    files += [OutFile(rel, src.read_text(encoding="utf-8"), "owned")
              for src, rel in lay.copies.items() if str(Path(rel).parent) not in board_dirs]
    files += tree_files(compiled, command)
    trees = [{"name": lib.name, "env": lib.pinned().env, "tag": t.tag,
              "repository": lib.pinned().pin.repository,
              "sources": [s.relative_to(t.root).as_posix() for s in t.sources],
              "include": list(lib.pinned().include)}
             for t in compiled.trees for lib in [board_library(t.library)]]
    ctx = {"model": m.name, "target": f"tvmgen_{m.name}", "cpu": compiled.board.cpu,
           "board": compiled.board.name,
           "sources": [f"tvmgen_{m.name}.c",
                       *(s for s in lay.sources if str(Path(s).parent) not in board_dirs)],
           "include": [i for i in lay.include if i not in board_dirs],
           "defines": list(compiled.board.tuning.defines()), "trees": trees,
           "devices": [{"name": d.name, "kind": d.kind} for d in m.devices],
           "kinds": list(m.kinds)}
    if compiled.board.rtos is not None:  # the kernel glue: rtos/ with its CMakeLists.txt
        files += rtos_folder_files(compiled.board, compiled.regions, command)
    files.append(OutFile("CMakeLists.txt", render(
        "model/CMakeLists.txt.j2", banner=banner("hash", FOLDER_COMMAND, "owned")), "owned"))
    files.append(OutFile(f"tvmgen_{m.name}.cmake", render(
        "model/model.cmake.j2", banner=banner("hash", command, "owned"),
        glue=[s for s in lay.sources if str(Path(s).parent) in board_dirs],
        glue_include=sorted(board_dirs), **ctx), "owned"))
    return files
