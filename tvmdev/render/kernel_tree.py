"""What ``tvmdev aot --board`` writes for a board kernel library the executor calls
(cmsis_nn): copies of tvmdev's kernels under ``kernels/<name>/`` and a CMakeLists.txt
that builds them with the tree's sources they reach, from ``-D<ENV>=`` or the pin by
FetchContent. Paths of the generating machine never appear."""

from __future__ import annotations

from ..load.kernel_tree import board_library
from ..plan.pipeline import Compiled
from ..write.files import OutFile
from .engine import banner, render


def tree_files(gen: Compiled, command: str) -> list[OutFile]:
    """The kernel copies and the CMakeLists.txt of each board library ``gen`` uses."""
    files = []
    cpu = gen.board.cpu
    for tree in gen.trees:
        lib = board_library(tree.library)
        glue = sorted({s for k in gen.kernels if k.library == tree.library for s in k.sources})
        headers = sorted(p for p in lib.folder.glob("*.h"))
        base = f"kernels/{lib.name}"
        files += [OutFile(f"{base}/{p.name}", p.read_text(encoding="utf-8"), "owned")
                  for p in [*glue, *headers]]
        files.append(OutFile(f"{base}/CMakeLists.txt", render(
            "kernel_tree/CMakeLists.txt.j2", banner=banner("hash", command, "owned"),
            name=lib.name, target=f"tvmk_{lib.name}", repository=lib.pinned().pin.repository,
            tag=lib.pinned().pin.tag, commit=lib.pinned().pin.commit, env=lib.pinned().env,
            arch=lib.arch_of(cpu), cpu=cpu, glue=[p.name for p in glue],
            sources=[s.relative_to(tree.root).as_posix() for s in tree.sources],
            include=list(lib.pinned().include)), "owned"))
    return files
