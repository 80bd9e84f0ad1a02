"""The aot folder's ``rtos/`` for a board on a CMSIS-RTOS2 kernel (``tvmdev aot --board B
--rtos K``): what ``tvmdev run --rtos`` compiles besides the model and the kernel's pinned
trees, so that a user's CMake build needs only those trees. The kernel glue
(:func:`tvmdev.render.rtos.rtos_files`), copies of the board's startup, console and
semihosting code (``support/``), the firmware's linker script with the kernel's heap and
stacks in sections of their own (:func:`tvmdev.render.linker.linker_script`), and a
CMakeLists.txt making the object library ``tvmdev_rtos`` of them and of the trees' sources,
each tree found from its CMake variable or environment variable."""

from __future__ import annotations

from pathlib import Path

from ..errors import TvmdevError
from ..load.board import Board
from ..load.rtos import core_of, load_rtos
from ..plan.memory_map import MemoryMap
from ..write.files import OutFile
from .engine import banner, render
from .harness import MAX_THREADS
from .linker import linker_script
from .rtos import DEFAULT_CLOCK_HZ, kernel_heap, rtos_files

FOLDER = "rtos"


def _support(board: Board) -> tuple[list[Path], list[Path]]:
    """The board's support sources, and the headers of its include folders."""
    headers = sorted(h for d in board.support.include for h in Path(d).glob("*.h"))
    return list(board.support.sources), headers


def rtos_folder_files(board: Board, regions: MemoryMap | None, command: str
                      ) -> list[OutFile]:
    """``rtos/`` of the aot folder for ``board`` (its ``rtos`` set), the model's memory map
    ``regions`` in its linker script."""
    assert board.rtos is not None
    rtos = load_rtos(board.rtos)
    core, port = core_of(rtos, board.cpu)
    if board.memory is None:
        raise TvmdevError(f"--rtos {rtos.name}: board {board.name} has no memory map",
                          board.where)
    heap = kernel_heap(board.memory.stack, MAX_THREADS)  # as tvmdev run's firmware's
    files = [OutFile(f"{FOLDER}/{f.path}", f.content, f.kind)
             for f in rtos_files(rtos, core, port, board.name,
                                 board.run.clock_hz or DEFAULT_CLOCK_HZ, command, heap)]
    sources, headers = _support(board)
    files += [OutFile(f"{FOLDER}/support/{p.name}", p.read_text(encoding="utf-8"), "owned")
              for p in [*sources, *headers]]
    files.append(OutFile(f"{FOLDER}/link.ld", linker_script(
        board.memory, regions, board.name, banner("c", command, "owned"), rtos.sections,
        heap), "owned"))
    trees = {t.name: t for t in rtos.trees}

    def at(tree: str, path: str) -> str:
        return f"${{{trees[tree].env}}}/{path}"

    kernel = [at(t.name, f) for t in rtos.trees for _, fs in t.compile for f in fs]
    kernel += [at(port.tree, f) for f in port.files]
    include = [at(t.name, i) for t in rtos.trees for i in t.include]
    include += [at(port.tree, i) for i in port.include]
    ours = [*(f"${{CMAKE_CURRENT_SOURCE_DIR}}/support/{p.name}" for p in sources),
            "${CMAKE_CURRENT_SOURCE_DIR}/tvmdev_rtos_glue.c"]
    tc = board.toolchain
    defines = ["_RTE_", *rtos.defines, *tc.defines,
               *(f"{k}={v}" for k, v in board.support.defines)]
    trees_ctx = [{"name": t.name, "env": t.env, "repository": t.pin.repository,
                  "tag": t.pin.tag, "revision_file": t.pin.revision_file}
                 for t in rtos.trees]
    files.append(OutFile(f"{FOLDER}/CMakeLists.txt", render(
        "rtos/CMakeLists.txt.j2", banner=banner("hash", command, "owned"), rtos=rtos,
        board=board.name, cpu=board.cpu, config_file=rtos.config_path, trees=trees_ctx,
        sources=[*kernel, *ours], include=include, defines=defines,
        asm_flags=[f for f in tc.cflags if f.startswith("-m")],
        cflags=" ".join(tc.cflags)), "owned"))
    return files
