"""Building the TinyEngine peer's firmware (benchmarks/_tinyengine_peer.py): MIT
TinyEngine's code generator run on a .tflite, and its generated code with TinyEngine's
kernels compiled for a tvmdev board, all in a cache directory outside the repository
(TVMDEV_TINYENGINE_CACHE, default ~/.cache/tvmdev-tinyengine).

The generator: ``tinyengine_peer/generate.py`` (TinyEngine's own calls, with its float or
integer requantization and its patch-based inference as switches) run by a Python that
has what TinyEngine's requirements.txt lists for the generator: numpy < 2 (under numpy
2's promotion rules its bias folding overflows int8), flatbuffers, matplotlib and tqdm.
That is TVMDEV_TINYENGINE_PYTHON, else ``venv/bin/python`` in the cache, else this
Python; ``GENERATOR_SETUP`` makes the venv.

The firmware: TinyEngine's kernels (TinyEngine/src/kernels, int_forward_op and
fp_requantize_op) archived once per core, with the flags of TinyEngine's own build of
its tutorial (tutorial/inference/Debug: -Ofast -std=c11, function and data sections) and
the board's -mcpu/-mfpu; the generated Source/*.c likewise; ``tinyengine_peer/main.c``,
runtime/cortex_m's startup, semihosting, UART (and icount.c) with the board's flags, the
input by ``.incbin``, and the TFLM peer's linker script of the board's memory map, linked
with ``--gc-sections``. TinyEngine's kernels include CMSIS_5's DSP and NN headers (its
third_party/CMSIS submodule): TVMDEV_TINYENGINE_CMSIS names a CMSIS_5 tree (the folder
holding CMSIS/), default ZEPHYR_MODULES (Zephyr's hal CMSIS module, CMSIS 5.7).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import _tflm_build as tflm_build
import _tflm_layout as tflm_layout
from _tflm_build import PeerUnavailable
from elftools.elf.elffile import ELFFile

from tvmdev.load.board import Board
from tvmdev.resources import platforms_dir, runtime_dir

HERE = Path(__file__).resolve().parent
REQUANTS = ("float", "integer")
# TinyEngine's build of its tutorial (tutorial/inference/Debug/Src/TinyEngine/src/subdir.mk)
TE_FLAGS = ("-Ofast", "-std=c11", "-ffunction-sections", "-fdata-sections")
KERNEL_DIRS = ("int_forward_op", "fp_requantize_op")
# The CMSIS-NN folders whose functions TinyEngine's kernels call (the others are not
# needed, and arm-none-eabi-gcc 12 fails on CMSIS 5.7's MVE softmax at -Ofast)
NN_DIRS = ("ConvolutionFunctions", "NNSupportFunctions")
REQUIREMENTS = "'numpy<2' flatbuffers matplotlib tqdm"
GENERATOR_SETUP = ("python3 -m venv ~/.cache/tvmdev-tinyengine/venv && "
                   f"~/.cache/tvmdev-tinyengine/venv/bin/pip install {REQUIREMENTS}")
_CHECK = ("import numpy, flatbuffers, matplotlib, tqdm, sys; "
          "sys.exit(0 if int(numpy.__version__.split('.')[0]) < 2 else 3)")


@dataclass(frozen=True)
class Generated:
    folder: Path  # holds codegen/Include and codegen/Source
    peak: int  # the memory scheduler's figure (activations and I/O)
    peak_mem: int  # genModel.h's PEAK_MEM: the static buffer, im2col buffers included


def cache_dir() -> Path:
    return Path(os.environ.get("TVMDEV_TINYENGINE_CACHE",
                               Path.home() / ".cache" / "tvmdev-tinyengine"))


def trees() -> tuple[Path, Path]:
    """TinyEngine's tree and the CMSIS_5 tree its kernels include; PeerUnavailable names
    what is missing."""
    missing = []
    te = os.environ.get("TINYENGINE_SOURCE_DIR", "")
    if not te or not (Path(te) / "code_generator" / "CodeGenerator.py").is_file():
        missing.append("TINYENGINE_SOURCE_DIR (a mit-han-lab/tinyengine checkout): "
                       + (f"{te} has no code_generator/CodeGenerator.py" if te else "not set"))
    cmsis = os.environ.get("TVMDEV_TINYENGINE_CMSIS") or os.environ.get("ZEPHYR_MODULES", "")
    if not cmsis or not (Path(cmsis) / "CMSIS" / "DSP" / "Include" / "arm_math.h").is_file():
        missing.append("TVMDEV_TINYENGINE_CMSIS (an ARM-software/CMSIS_5 tree with DSP and "
                       "NN, as TinyEngine's third_party/CMSIS; default ZEPHYR_MODULES, "
                       f"Zephyr's CMSIS module): {cmsis or 'not set'} has no "
                       "CMSIS/DSP/Include/arm_math.h")
    if shutil.which("arm-none-eabi-gcc") is None:
        missing.append("arm-none-eabi-gcc on PATH")
    if missing:
        raise PeerUnavailable("the TinyEngine peer needs " + "; ".join(missing))
    return Path(te).resolve(), Path(cmsis).resolve() / "CMSIS"


def generator_python() -> str:
    """The Python that runs TinyEngine's generator (module docstring), checked."""
    venv = cache_dir() / "venv" / "bin" / "python"
    python = os.environ.get("TVMDEV_TINYENGINE_PYTHON") or (
        str(venv) if venv.is_file() else sys.executable)
    if subprocess.run([python, "-c", _CHECK], capture_output=True).returncode != 0:
        raise PeerUnavailable(f"TinyEngine's generator needs numpy < 2, flatbuffers, "
                              f"matplotlib and tqdm; {python} lacks one: {GENERATOR_SETUP} "
                              "(or TVMDEV_TINYENGINE_PYTHON=a Python that has them)")
    return python


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()[:12]


def _peak_mem(header: Path) -> int:
    with header.open() as f:
        for line in f:
            if line.startswith("#define PEAK_MEM "):
                return int(line.split()[2])
    raise RuntimeError(f"{header}: no PEAK_MEM")


def generate(model: Path, requant: str, patches: int = 0, split: int = 0) -> Generated:
    """TinyEngine's code for ``model`` (cached by the model's bytes and the switches), or
    PeerUnavailable with the generator's refusal."""
    te, _ = trees()
    script = HERE / "tinyengine_peer" / "generate.py"
    key = _digest(model.read_bytes(), script.read_bytes(), f"{requant}/{patches}/{split}".encode())
    folder = cache_dir() / "gen" / f"{model.stem}-{requant}-p{patches}s{split}-{key}"
    done = folder / "result.json"
    if not done.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        proc = subprocess.run([generator_python(), str(script), str(model.resolve()), requant,
                               str(patches), str(split)], cwd=folder, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(te),
                                              "MPLBACKEND": "Agg"})
        (folder / "generator.log").write_text(proc.stdout + proc.stderr)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines or not lines[-1].startswith("{"):
            raise PeerUnavailable(f"TinyEngine's generator failed (exit {proc.returncode}): "
                                  + (proc.stdout + proc.stderr).strip()[-300:])
        done.write_text(lines[-1] + "\n")
    result = json.loads(done.read_text())
    if "refused" in result:
        raise PeerUnavailable(f"TinyEngine's generator refuses {model.name}: "
                              f"{result['refused']}")
    return Generated(folder, int(result["peak"]),
                     _peak_mem(folder / "codegen" / "Include" / "genModel.h"))


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed: {(proc.stdout + proc.stderr)[-1500:]}")


def cpu_flags(board: Board) -> list[str]:
    return [f for f in board.toolchain.cflags
            if f.startswith(("-mcpu", "-mthumb", "-mfpu", "-mfloat-abi"))]


def _includes(te: Path, cmsis: Path, gen: Path | None) -> list[str]:
    dirs = [te / "TinyEngine" / "include", cmsis / "NN" / "Include", cmsis / "DSP" / "Include",
            cmsis / "Core" / "Include"]
    return [f"-I{d}" for d in ([gen / "codegen" / "Include"] if gen else []) + dirs]


def kernels(gen: Generated, board: Board) -> Path:
    """TinyEngine's kernels for ``board``'s core, compiled against the generated headers
    (its kernels include genInclude.h) and archived, once per generated model."""
    te, cmsis = trees()
    flags = [*cpu_flags(board), *TE_FLAGS]
    sources = sorted(s for d in KERNEL_DIRS
                     for s in (te / "TinyEngine" / "src" / "kernels" / d).glob("*.c"))
    key = _digest(" ".join(flags).encode(), str(te).encode(), str(cmsis).encode())
    lib = gen.folder / f"libtinyengine_{board.cpu}_{key}.a"
    if lib.is_file():
        return lib
    work = lib.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in sources:
        obj = work / f"{src.parent.name}_{src.stem}.o"
        _run(["arm-none-eabi-gcc", *flags, *_includes(te, cmsis, gen.folder), "-c", str(src),
              "-o", str(obj)])
        objs.append(str(obj))
    _run(["arm-none-eabi-ar", "rcs", str(lib), *objs])
    return lib


def cmsis_nn(board: Board) -> Path:
    """The CMSIS_5 tree's CMSIS-NN sources (NN_DIRS) for ``board``'s core, compiled and archived
    (once): TinyEngine's integer kernels call some of its functions
    (arm_nn_mat_mult_kernel_s8_s16_reordered, for one)."""
    _, cmsis = trees()
    flags = [*cpu_flags(board), *TE_FLAGS]
    key = _digest(" ".join([*flags, *NN_DIRS]).encode(), str(cmsis).encode())
    lib = cache_dir() / "lib" / f"libcmsisnn_{board.cpu}_{key}.a"
    if lib.is_file():
        return lib
    work = lib.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in sorted(s for d in NN_DIRS for s in (cmsis / "NN" / "Source" / d).glob("*.c")):
        objs.append(str(work / f"{src.stem}.o"))
        _run(["arm-none-eabi-gcc", *flags, *_includes(Path("/nonexistent"), cmsis, None)[1:],
              "-c", str(src), "-o", objs[-1]])
    _run(["arm-none-eabi-ar", "rcs", str(lib), *objs])
    return lib


def firmware(gen: Generated, board: Board, data: bytes, output_bytes: int,
             icount: bool) -> Path:
    """The peer's ELF for the generated code ``gen`` on ``board``, ``data`` the int8 input
    copied into TinyEngine's input buffer, ``output_bytes`` printed from its output."""
    if board.memory is None or board.run.method != "qemu-system":
        raise PeerUnavailable(f"board {board.name}: the peer builds for tvmdev's bare-metal "
                              "qemu-system boards")
    te, cmsis = trees()
    lib = kernels(gen, board)
    work = gen.folder / f"fw-{board.name}{'-icount' if icount else ''}"
    work.mkdir(exist_ok=True)
    (work / "input.bin").write_bytes(data)
    (work / "data.S").write_text((HERE / "tinyengine_peer" / "data.S.in").read_text().format(
        input=work / "input.bin", n=len(data)))
    flags = [*cpu_flags(board), *TE_FLAGS, *_includes(te, cmsis, gen.folder)]
    objs = []
    for src in sorted((gen.folder / "codegen" / "Source").glob("*.c")):
        objs.append(str(work / f"{src.stem}.o"))
        # the generated depthwise kernels call arm_nn_requantize, CMSIS-NN's inline
        # function, without including its header: include it for them
        _run(["arm-none-eabi-gcc", *flags, "-include", "arm_nnsupportfunctions.h", "-c",
              str(src), "-o", objs[-1]])
    # TFLM's script: genModel.c's read-only data (the weights) where the TFLM peer puts
    # its model (the program's code region, or on mps3_an547 its QSPI flash when they do
    # not fit the 512 KiB ITCM beside the code), the buffer .bss in RAM
    weights = _weights_as_model(work / "genModel.o")
    (work / "link.ld").write_text(tflm_layout.link_script(
        board, tflm_layout.layout(board, weights + len(data))))
    main_flags = [f"-DTE_PEER_CONSOLE={board.support.console_uart}",
                  f"-DTE_PEER_OUTPUT_BYTES={output_bytes}U",
                  f"-I{platforms_dir() / 'cmsis' / 'include'}",
                  f"-I{runtime_dir() / 'cortex_m'}", *(["-DTVMDEV_ICOUNT"] if icount else [])]
    _run(["arm-none-eabi-gcc", *flags, *main_flags, "-c", str(HERE / "tinyengine_peer" / "main.c"),
          "-o", str(work / "main.o")])
    _run(["arm-none-eabi-gcc", *cpu_flags(board), "-c", str(work / "data.S"),
          "-o", str(work / "data.o")])
    objs += [str(work / "main.o"), str(work / "data.o"),
             *tflm_build._support_objects(board, work, icount)]
    elf = work / "tinyengine_peer.elf"
    _link(["arm-none-eabi-gcc", *cpu_flags(board), "-nostartfiles", "--specs=nano.specs",
          "--specs=nosys.specs", "-Wl,--gc-sections", f"-Wl,-Map={work / 'peer.map'}",
          f"-T{work / 'link.ld'}", *objs, str(lib), str(cmsis_nn(board)), "-lm", "-o", str(elf)])
    return elf


def _weights_as_model(obj: Path) -> int:
    """Rename the read-only data sections of ``obj`` (genModel.o: the weights and the
    quantization constants) to the section the TFLM peer's script places as the model;
    their bytes."""
    with obj.open("rb") as f:
        sections = [(s.name, int(s["sh_size"])) for s in ELFFile(f).iter_sections()
                    if s.name.startswith(".rodata")]
    renames = [a for name, _ in sections
               for a in ("--rename-section", f"{name}=.rodata.tflm_peer_model")]
    if renames:
        _run(["arm-none-eabi-objcopy", *renames, str(obj)])
    return sum(size for _, size in sections)


def _link(cmd: list[str]) -> None:
    """Link; a region the firmware overflows is PeerUnavailable saying which."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        over = re.findall(r"region `(\w+)' overflowed by (\d+) bytes", proc.stderr)
        if over:
            raise PeerUnavailable("the firmware does not fit the board: " + ", ".join(
                f"{region} overflowed by {int(n):,} bytes" for region, n in over))
        raise RuntimeError(f"linking failed: {(proc.stdout + proc.stderr)[-1500:]}")


def static_buffer(elf: Path) -> int:
    """The size of TinyEngine's static ``buffer`` (genModel.h) in ``elf``."""
    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        sizes = [int(s["st_size"]) for s in symtab.iter_symbols()  # type: ignore[union-attr]
                 if s.name == "buffer" and s["st_info"]["type"] == "STT_OBJECT"]
    if len(sizes) != 1:
        raise RuntimeError(f"{elf}: {len(sizes)} symbols named buffer, expected one")
    return sizes[0]
