"""tvmdev's Metal kernel library as files for a build: the sources in ``runtime/metal``
copied, and ``tvmk_metal_config.h`` rendered for a board (its GEMM crossover, and the
MSL sources as C strings for the host code to compile at run time)."""

from __future__ import annotations

from ..load.board import Board
from ..plan import metal
from ..resources import runtime_dir
from ..write.files import OutFile
from .engine import banner, render

LIBRARY = "metal"
"""The library's folder under ``runtime/`` (sources) and ``templates/`` (its config)."""

COPIED = ("kernels.yaml", "tvmk_metal.h", "tvmk_metal_gemm.m", "gemm_simdgroup.metal",
          "gemm_matmul2d.metal")

SOURCES = (("gemm_simdgroup.metal", "tvmk_metal_simdgroup_msl"),
           ("gemm_matmul2d.metal", "tvmk_metal_matmul2d_msl"))
"""The MSL files the host code compiles, and the C arrays that hold them."""


def c_string_lines(text: str) -> list[str]:
    """``text`` as the bodies of C string literals, one per line, newline included."""
    out = []
    for line in text.splitlines():
        escaped = (line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
                   .replace("??", "?\\?"))  # no trigraphs under -std=c99
        out.append(escaped + "\\n")
    return out


def library_files(board: Board, prefix: str = "") -> list[OutFile]:
    """The Metal kernel library for ``board``, with paths under ``prefix``."""
    folder = runtime_dir() / LIBRARY
    files = [OutFile(prefix + name, (folder / name).read_text(encoding="utf-8"), "owned")
             for name in COPIED]
    crossover = metal.crossover_m(board)
    doc = (f"matmul2d from M = {crossover}: offload.gemm.metal_crossover_m of board "
           f"{board.name}" if crossover is not None else
           f"board {board.name} has no offload.gemm.metal_crossover_m: never matmul2d")
    sources = [{"file": name, "symbol": symbol,
                "lines": c_string_lines((folder / name).read_text(encoding="utf-8"))}
               for name, symbol in SOURCES]
    text = render(f"{LIBRARY}/tvmk_metal_config.h.j2",
                  banner=banner("c", f"tvmdev metal kernel library for board {board.name}",
                                "owned"),
                  board=board.name, crossover_doc=doc,
                  crossover=crossover if crossover is not None else "TVMK_METAL_NO_CROSSOVER",
                  sources=sources)
    files.append(OutFile(prefix + "tvmk_metal_config.h", text, "owned"))
    return files

