"""Building the TFLM peer's firmware (benchmarks/_tflm_peer.py): TFLM's library from a
tflite-micro tree outside the repository, with its own Makefile, and the firmware around
it, all in a cache directory (TVMDEV_TFLM_CACHE, default ~/.cache/tvmdev-tflm).

The library: ``make`` with TARGET=cortex_m_generic, TARGET_ARCH cortex-m4+fp (the FPU, as
mps2_an386 has) or cortex-m55, OPTIMIZED_KERNEL_DIR=cmsis_nn (unless the reference
kernels are asked for), the toolchain from PATH, BUILD_TYPE=release (NDEBUG, so no
TFLITE_DCHECK, and no error strings: what an application ships, "the smallest binary" in
TFLM's words) and CORE_OPTIMIZATION_LEVEL=-O2 (the kernels are at -O2 already), with the
trees below given as paths so that it downloads nothing. It compiles TFLM's core, the
CMSIS-NN library and the kernels of ``OPS`` only (not every kernel: that halves the
build), as object targets of that Makefile, and archives them. For a model with a signal
operator (micro_speech's audio preprocessor) the archive adds the signal library's
kernels (signal/micro/kernels), their signal/src code and TFLM's KISS FFT wrappers, which
compile kissfft v130 with TFLM's patch (the tree KISSFFT_TFLM_DIR names, as TFLM's
kissfft_download.sh makes it). The Makefile reads its examples' Makefile.inc files, which
run a script importing PIL: pillow must be installed.

TVMDEV_TFLM_MAKE_ARGS adds make variables (``BUILD_TYPE=default`` keeps the DCHECKs and
the error strings; ``CORE_OPTIMIZATION_LEVEL=-Os`` is the Makefile's own default for the
core), built apart from the other objects.

The firmware: ``tflm_peer/main.cc`` with the Makefile's CXXFLAGS and INCLUDES,
runtime/cortex_m's startup.c, semihosting.c, cmsdk_uart.c (and icount.c) with the
board's C flags, the model and the input by ``.incbin``, and a linker script of the
board's memory map (a large model's data and arena in the board's larger memories:
_tflm_layout.py), linked with ``--gc-sections``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _tflm_layout import arena_bytes, layout, link_script
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from tvmdev.load.board import Board
from tvmdev.resources import platforms_dir, runtime_dir

HERE = Path(__file__).resolve().parent
ARCH = {"cortex-m4": "cortex-m4+fp", "cortex-m55": "cortex-m55"}
KERNELS = ("cmsis_nn", "reference")
MAKEFILE = "tensorflow/lite/micro/tools/make/Makefile"


class PeerUnavailable(Exception):
    """The peer cannot be built or run here; the message says what is missing."""


# name: (environment variable, a file the tree has, what it is)
TREES = {
    "tflite_micro": ("TFLITE_MICRO_SOURCE_DIR", MAKEFILE,
                     "a tflite-micro checkout (github.com/tensorflow/tflite-micro)"),
    "cmsis_nn": ("CMSIS_NN_TFLM_DIR", "Include/arm_nnfunctions.h",
                 "CMSIS-NN at the commit tflite-micro pins (ZIP_PREFIX_NN in its "
                 "tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn_download.sh)"),
    "cmsis": ("CMSIS_TFLM_DIR", "CMSIS/Core/Include/cmsis_compiler.h",
              "ARM-software/CMSIS_6 at the commit ext_libs/cmsis_download.sh pins"),
    "cortex_dfp": ("CORTEX_DFP_TFLM_DIR", "Device/ARMCM4/Include/ARMCM4.h",
                   "ARM-software/Cortex_DFP at the commit ext_libs/cmsis_download.sh pins "
                   "(default: Cortex_DFP in CMSIS_TFLM_DIR)"),
    "flatbuffers": ("FLATBUFFERS_TFLM_DIR", "include/flatbuffers/flatbuffers.h",
                    "google/flatbuffers at the tag third_party_downloads.inc pins, with "
                    "tflite-micro's tools/make/flatbuffers.patch applied"),
    "gemmlowp": ("GEMMLOWP_TFLM_DIR", "fixedpoint/fixedpoint.h",
                 "google/gemmlowp at the commit third_party_downloads.inc pins"),
    "ruy": ("RUY_TFLM_DIR", "ruy/profiler/instrumentation.h",
            "google/ruy at the commit third_party_downloads.inc pins"),
    "kissfft": ("KISSFFT_TFLM_DIR", "tools/kiss_fftr.c",
                "mborgerding/kissfft at the tag third_party_downloads.inc pins (v130), with "
                "tflite-micro's third_party/kissfft/kissfft.patch applied"),
}
# Trees only some models need: kissfft for the signal library's operators.
OPTIONAL_TREES = ("kissfft",)
# The signal library's sources (sources.inc and additional_kernels.inc list them, kernels
# and their signal/src code), compiled and archived for a model with a signal operator.
SIGNAL_SOURCES = ("signal/src/", "signal/micro/kernels/")

# TFLite builtin: (MicroMutableOpResolver method, the int8 registration or None for the
# default one, the kernel sources' stems under tensorflow/lite/micro/kernels).
OPS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "CONV_2D": ("AddConv2D", "Register_CONV_2D_INT8", ("conv", "conv_common")),
    "DEPTHWISE_CONV_2D": ("AddDepthwiseConv2D", "Register_DEPTHWISE_CONV_2D_INT8",
                          ("depthwise_conv", "depthwise_conv_common")),
    "FULLY_CONNECTED": ("AddFullyConnected", "Register_FULLY_CONNECTED_INT8",
                        ("fully_connected", "fully_connected_common")),
    "SOFTMAX": ("AddSoftmax", "Register_SOFTMAX_INT8", ("softmax", "softmax_common")),
    "AVERAGE_POOL_2D": ("AddAveragePool2D", "Register_AVERAGE_POOL_2D_INT8",
                        ("pooling", "pooling_common")),
    "MAX_POOL_2D": ("AddMaxPool2D", "Register_MAX_POOL_2D_INT8",
                    ("pooling", "pooling_common")),
    "ADD": ("AddAdd", "Register_ADD_INT8", ("add", "add_common")),
    "MUL": ("AddMul", "Register_MUL_INT8", ("mul", "mul_common")),
    "PAD": ("AddPad", "Register_PAD_INT8", ("pad", "pad_common")),
    "RESHAPE": ("AddReshape", None, ("reshape", "reshape_common")),
    "QUANTIZE": ("AddQuantize", None, ("quantize", "quantize_common")),
    "DEQUANTIZE": ("AddDequantize", None, ("dequantize", "dequantize_common")),
    "PACK": ("AddPack", None, ("pack",)),
    "SHAPE": ("AddShape", None, ("shape",)),
    "STRIDED_SLICE": ("AddStridedSlice", None, ("strided_slice", "strided_slice_common")),
    # the field's models (issue 21)
    "TRANSPOSE": ("AddTranspose", None, ("transpose", "transpose_common")),
    "RESIZE_NEAREST_NEIGHBOR": ("AddResizeNearestNeighbor", None, ("resize_nearest_neighbor",)),
    "RESIZE_BILINEAR": ("AddResizeBilinear", None, ("resize_bilinear",)),
    "LOG_SOFTMAX": ("AddLogSoftmax", None, ("log_softmax",)),
    "MEAN": ("AddMean", None, ("reduce", "reduce_common")),
    "HARD_SWISH": ("AddHardSwish", None, ("hard_swish", "hard_swish_common")),
    "LEAKY_RELU": ("AddLeakyRelu", None, ("leaky_relu", "leaky_relu_common")),
    "SUB": ("AddSub", None, ("sub", "sub_common")),
    "MAXIMUM": ("AddMaximum", None, ("maximum_minimum",)),
    "MINIMUM": ("AddMinimum", None, ("maximum_minimum",)),
    "LOGISTIC": ("AddLogistic", None, ("logistic", "logistic_common")),
    "TANH": ("AddTanh", None, ("tanh",)),
    "RELU": ("AddRelu", None, ("activations", "activations_common")),
    "RELU6": ("AddRelu6", None, ("activations", "activations_common")),
    "CONCATENATION": ("AddConcatenation", None, ("concatenation",)),
    "SPLIT": ("AddSplit", None, ("split",)),
    "SPLIT_V": ("AddSplitV", None, ("split_v",)),
    "TRANSPOSE_CONV": ("AddTransposeConv", None, ("transpose_conv",)),
    "SVDF": ("AddSvdf", "Register_SVDF_INT8", ("svdf", "svdf_common")),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("AddUnidirectionalSequenceLSTM", None,
                                     ("unidirectional_sequence_lstm", "lstm_eval",
                                      "lstm_eval_common")),
    "CAST": ("AddCast", None, ("cast",)),
    "DIV": ("AddDiv", None, ("div",)),
    # TFLM's signal library (custom operators; their sources: SIGNAL_SUPPORT)
    **{f"CUSTOM:Signal{name}": (f"Add{name}", None, ())
       for name in ("Window", "FftAutoScale", "Rfft", "Energy", "FilterBank",
                    "FilterBankSquareRoot", "FilterBankSpectralSubtraction", "PCAN",
                    "FilterBankLog")},
}
SUPPORT_STEMS = ("kernel_util", "micro_tensor_utils")
VARS = ("CXXFLAGS", "INCLUDES", "MICROLITE_LIB_OBJS", "MICROLITE_KERNEL_OBJS",
        "MICROLITE_THIRD_PARTY_OBJS", "MICROLITE_THIRD_PARTY_KERNEL_OBJS")


@dataclass(frozen=True)
class Built:
    elf: Path
    flash: int  # text + rodata + data, less the model and input arrays
    ops: tuple[str, ...]
    pinned: bool | None  # the CMSIS-NN tree is at tflite-micro's pin (None: not a git tree)
    parts: dict[str, int]  # flash by origin (flash_parts)


def cache_dir() -> Path:
    return Path(os.environ.get("TVMDEV_TFLM_CACHE", Path.home() / ".cache" / "tvmdev-tflm"))


def extra_make_args() -> tuple[list[str], str]:
    """TVMDEV_TFLM_MAKE_ARGS (more make variables, e.g. ``BUILD_TYPE=release
    CORE_OPTIMIZATION_LEVEL=-Os``, after the defaults) and the suffix that keeps their
    objects apart (make does not rebuild an object when only its flags change)."""
    extra = shlex.split(os.environ.get("TVMDEV_TFLM_MAKE_ARGS", ""))
    if not extra:
        return [], ""
    return extra, "-" + hashlib.sha1("\0".join(extra).encode()).hexdigest()[:8]


def trees() -> dict[str, Path]:
    """The trees from the environment; PeerUnavailable names every one missing."""
    found: dict[str, Path] = {}
    missing = []
    for name, (var, marker, what) in TREES.items():
        value = os.environ.get(var)
        if not value and name == "cortex_dfp" and "cmsis" in found:
            value = str(found["cmsis"] / "Cortex_DFP")
        if not value and name in OPTIONAL_TREES:
            continue
        if not value or not (Path(value) / marker).is_file():
            got = f"{value} has no {marker}" if value else "not set"
            missing.append(f"{var} ({what}): {got}")
            continue
        found[name] = Path(value).resolve()
    if shutil.which("arm-none-eabi-g++") is None:
        missing.append("arm-none-eabi-g++ on PATH (and libstdc++-arm-none-eabi-newlib)")
    if missing:
        raise PeerUnavailable("the TFLM peer needs " + "; ".join(missing))
    return found


def pinned(t: dict[str, Path]) -> bool | None:
    """Whether the CMSIS-NN tree is at the commit tflite-micro pins."""
    script = (t["tflite_micro"] / "tensorflow/lite/micro/tools/make/ext_libs"
              / "cmsis_nn_download.sh").read_text()
    pin = re.search(r'ZIP_PREFIX_NN="([0-9a-f]{40})"', script)
    head = subprocess.run(["git", "-C", str(t["cmsis_nn"]), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    if pin is None or head.returncode != 0:
        return None
    return head.stdout.strip() == pin[1]


def _downloads(t: dict[str, Path]) -> Path:
    """The Makefile's DOWNLOADS_DIR: links to the trees, and an empty pigweed (the
    Makefile clones it at parse time otherwise; only its tests use it)."""
    d = cache_dir() / "downloads"
    (d / "pigweed").mkdir(parents=True, exist_ok=True)
    for name in ("flatbuffers", "gemmlowp", "ruy", "kissfft"):
        if name not in t:
            continue
        link = d / name
        if link.is_symlink() and link.resolve() != t[name]:
            link.unlink()
        if not link.exists():
            link.symlink_to(t[name])
    return d


def make_command(t: dict[str, Path], arch: str, kernels: str) -> list[str]:
    gcc = shutil.which("arm-none-eabi-gcc")
    assert gcc is not None
    cmd = ["make", "-s", "-C", str(t["tflite_micro"]), "-f", MAKEFILE,
           "TARGET=cortex_m_generic", f"TARGET_ARCH={arch}",
           f"TARGET_TOOLCHAIN_ROOT={Path(gcc).parent}/",
           f"CMSIS_PATH={t['cmsis']}", f"CORTEX_DFP_PATH={t['cortex_dfp']}",
           f"CMSIS_NN_PATH={t['cmsis_nn']}", f"DOWNLOADS_DIR={_downloads(t)}",
           "BUILD_TYPE=release", "CORE_OPTIMIZATION_LEVEL=-O2", "THIRD_PARTY_TARGETS="]
    extra, suffix = extra_make_args()
    cmd += [f"BASE_GENDIR={cache_dir() / ('gen' + suffix)}", *extra]
    if kernels == "cmsis_nn":
        cmd.append("OPTIMIZED_KERNEL_DIR=cmsis_nn")
    return cmd


def _make(cmd: list[str], what: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-6:]
        raise PeerUnavailable(f"tflite-micro's make ({what}) failed: " + " | ".join(tail))
    return proc.stdout


def make_vars(cmd: list[str]) -> dict[str, str]:
    """The Makefile's VARS for ``cmd`` (cached: reading the Makefile takes seconds)."""
    key = hashlib.sha1("\0".join(cmd).encode()).hexdigest()[:16]
    path = cache_dir() / "vars" / f"{key}.json"
    if path.is_file():
        cached: dict[str, str] = json.loads(path.read_text())
        return cached
    out = _make([*cmd, *(f"print-{v}" for v in VARS)], "reading its variables")
    got = {m[1]: m[2] for m in re.finditer(r"^([A-Z_]+)=(.*)$", out, re.M) if m[1] in VARS}
    if set(got) != set(VARS):
        raise PeerUnavailable(f"tflite-micro's Makefile did not print {set(VARS) - set(got)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(got))
    return got


def signal_tree(t: dict[str, Path]) -> None:
    """PeerUnavailable unless kissfft is there with TFLM's patch (the signal library's
    FFT: unpatched, it calls malloc and fprintf)."""
    var, marker, what = TREES["kissfft"]
    if "kissfft" not in t:
        raise PeerUnavailable(f"the TFLM peer needs {var} ({what}) for the signal "
                              "library's operators: not set")
    if "Patched." not in (t["kissfft"] / "kiss_fft.h").read_text():
        raise PeerUnavailable(f"{var}={t['kissfft']}: kiss_fft.h is not patched; apply "
                              "tflite-micro's third_party/kissfft/kissfft.patch")


def library(t: dict[str, Path], arch: str, kernels: str,
            signal: bool = False) -> tuple[Path, dict[str, str]]:
    """TFLM's core, CMSIS-NN and the kernels of OPS (``signal``: and the signal
    library's), compiled by tflite-micro's Makefile (make -j2; up to date after the first
    time) and archived; and the Makefile's VARS."""
    cmd = make_command(t, arch, kernels)
    v = make_vars(cmd)
    stems = set(SUPPORT_STEMS).union(*(s for _, _, s in OPS.values()))
    kernel_objs = [o for o in v["MICROLITE_KERNEL_OBJS"].split()
                   if "/tensorflow/lite/micro/kernels/" in o and Path(o).stem in stems
                   or signal and any(f"/{d}" in o for d in SIGNAL_SOURCES)]
    objs = [*v["MICROLITE_LIB_OBJS"].split(), *kernel_objs,
            *v["MICROLITE_THIRD_PARTY_OBJS"].split(),
            *v["MICROLITE_THIRD_PARTY_KERNEL_OBJS"].split()]
    _make([*cmd, "-j2", *objs], f"building {len(objs)} objects for {arch}")
    lib = cache_dir() / "lib" / (f"libtflm_{arch}_{kernels}{'_signal' if signal else ''}"
                                 f"{extra_make_args()[1]}.a")
    lib.parent.mkdir(parents=True, exist_ok=True)
    lib.unlink(missing_ok=True)
    subprocess.run(["arm-none-eabi-ar", "rcs", str(lib), *objs], check=True)
    return lib, v


def registrations(ops: list[str], int8: frozenset[str] = frozenset()) -> str:
    """peer_config.h's PEER_OPS: the model's operators, with the int8 registration where
    TFLM has one and every use of the operator (``int8``: such operators) is int8."""
    unknown = [op for op in ops if op not in OPS]
    if unknown:
        raise PeerUnavailable(f"the peer's runner registers no {', '.join(unknown)} "
                              "(add it to _tflm_build.OPS)")
    calls = []
    for op in ops:
        method, reg, _ = OPS[op]
        reg = reg if op in int8 else None
        calls.append(f"(r).{method}({f'tflite::{reg}()' if reg else ''});")
    return " \\\n    ".join(calls)


def config_header(board: Board, ops: list[str], input_sizes: list[int],
                  int8: frozenset[str] = frozenset(), arena: int | None = None) -> str:
    """peer_config.h: the registrations, the arena (``arena`` bytes, by default the
    program RAM's: _tflm_layout.arena_bytes), the console and the byte size of each input
    (stored one after the other in tflm_peer_input)."""
    return "\n".join([
        "/* Generated by benchmarks/_tflm_build.py. */",
        f"#define PEER_OP_COUNT {len(ops)}",
        f"#define PEER_OPS(r) \\\n    {registrations(ops, int8)}",
        f"#define PEER_ARENA_BYTES {arena or arena_bytes(board)}",
        f"#define PEER_CONSOLE {board.support.console_uart}",
        f"#define PEER_INPUT_COUNT {len(input_sizes)}",
        f"#define PEER_INPUT_BYTES {{{', '.join(f'{n}U' for n in input_sizes)}}}", ""])


def flash_bytes(elf: Path) -> int:
    """Loaded bytes of ``elf`` (text, rodata, exidx, init_array, data), less the model
    and the input arrays."""
    with elf.open("rb") as f:
        e = ELFFile(f)
        total = sum(s["sh_size"] for s in e.iter_sections()
                    if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_type"] != "SHT_NOBITS")
        symtab = e.get_section_by_name(".symtab")
        sizes = {s.name: s["st_size"] for s in symtab.iter_symbols()  # type: ignore[union-attr]
                 if s.name in ("tflm_peer_model", "tflm_peer_input")}
    if len(sizes) != 2:
        raise RuntimeError(f"{elf}: no model or input symbol")
    return int(total - sum(sizes.values()))


_MAP_LINE = re.compile(r"^ (\.(?:text|rodata|data)\S*)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$",
                       re.M)


def flash_parts(map_text: str) -> dict[str, int]:
    """Flash (text, rodata, data) by origin, from the linker's map: ``tflm`` (TFLM's core
    and kernels, and main.cc: the interpreter and the registrations), ``cmsis_nn`` (the
    library's arm_* files), ``libc`` (newlib, libm, libgcc, libstdc++), ``harness``
    (startup, semihosting, the UART, the counter). The model and input are left out.
    Sizes are the input sections', before the linker merges equal strings: the parts may
    add up to a little more (1-2 %) than flash_bytes."""
    parts = dict.fromkeys(("tflm", "cmsis_nn", "libc", "harness"), 0)
    # what was linked (the map lists the discarded sections first); a long section name
    # stands on its own line: join it to its address line
    linked = map_text[map_text.find("Linker script and memory map"):]
    text = re.sub(r"^ (\.\S+)\n\s+(0x)", r" \1 \2", linked, flags=re.M)
    for name, size, origin in _MAP_LINE.findall(text):
        if "tflm_peer_" in name:
            continue
        member = re.search(r"\(([^()]*)\)$", origin)
        if origin.endswith("main.o") or (member and "libtflm_" in origin):
            kind = "cmsis_nn" if member and member[1].startswith("arm_") else "tflm"
        elif member:
            kind = "libc"
        else:
            kind = "harness"
        parts[kind] += int(size, 16)
    return parts


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {(proc.stdout + proc.stderr)[-1500:]}")


def _support_objects(board: Board, work: Path, icount: bool) -> list[str]:
    """tvmdev's startup, semihosting and console UART (and icount.c) for ``board``."""
    tc, sup = board.toolchain, board.support
    sources = [*sup.sources]
    defines = [*(f"-D{d}" for d in tc.defines), *(f"-D{k}={v}" for k, v in sup.defines)]
    if icount:
        sources.append(runtime_dir() / "cortex_m" / "icount.c")
        defines.append("-DTVMDEV_ICOUNT")
    includes = [f"-I{d}" for d in (*sup.include, platforms_dir() / "cmsis" / "include")]
    objs = []
    for src in sources:
        obj = work / f"{Path(src).stem}.o"
        _run([tc.cc, *tc.cflags, *defines, *includes, "-c", str(src), "-o", str(obj)])
        objs.append(str(obj))
    return objs


def firmware(model: Path, board: Board, kernels: str, ops: list[str],
             inputs: list[np.ndarray], int8: frozenset[str], icount: bool) -> Built:
    """Build the peer's firmware for ``model`` on ``board``: ``inputs`` are the model's
    input arrays (their raw bytes are stored), ``int8`` the operators registered with
    their int8 variants."""
    if kernels not in KERNELS:
        raise PeerUnavailable(f"kernels {kernels!r}: one of {', '.join(KERNELS)}")
    arch = ARCH.get(board.cpu)
    if arch is None or board.memory is None or board.run.method != "qemu-system":
        raise PeerUnavailable(f"board {board.name} ({board.cpu}): the peer builds for "
                              "the bare-metal qemu-system boards mps2_an386 and mps3_an547")
    t = trees()
    signal = any(op.startswith("CUSTOM:Signal") for op in ops)
    if signal:
        signal_tree(t)
    lib, v = library(t, arch, kernels, signal)
    work = cache_dir() / "fw" / f"{model.stem}_{board.name}_{kernels}{extra_make_args()[1]}"
    work.mkdir(parents=True, exist_ok=True)
    stored = b"".join(np.ascontiguousarray(x).tobytes() for x in inputs)
    lay = layout(board, model.stat().st_size + len(stored))
    (work / "peer_config.h").write_text(
        config_header(board, ops, [x.nbytes for x in inputs], int8, lay.arena))
    (work / "input.bin").write_bytes(stored)
    data = (HERE / "tflm_peer" / "data.S.in").read_text()
    (work / "data.S").write_text(data.format(model=model.resolve(), input=work / "input.bin",
                                             n=len(stored)))
    (work / "link.ld").write_text(link_script(board, lay))
    cxx = [*shlex.split(v["CXXFLAGS"]), "-O2"]
    arch_flags = [f for f in cxx if f.startswith(("-mcpu", "-mfpu", "-mthumb", "-mfloat-abi"))]
    includes = [*shlex.split(v["INCLUDES"]), f"-I{work}",
                f"-I{platforms_dir() / 'cmsis' / 'include'}", f"-I{runtime_dir() / 'cortex_m'}"]
    _run(["arm-none-eabi-g++", *cxx, *includes, *(["-DTVMDEV_ICOUNT"] if icount else []),
          "-c", str(HERE / "tflm_peer" / "main.cc"), "-o", str(work / "main.o")],
         cwd=t["tflite_micro"])  # INCLUDES has -I.
    _run(["arm-none-eabi-gcc", *arch_flags, "-c", str(work / "data.S"),
          "-o", str(work / "data.o")])
    objs = [str(work / "main.o"), str(work / "data.o"), *_support_objects(board, work, icount)]
    elf = work / "tflm_peer.elf"
    _run(["arm-none-eabi-g++", *arch_flags, "-nostartfiles", "--specs=nano.specs",
          "--specs=nosys.specs", "-Wl,--gc-sections", f"-Wl,-Map={work / 'tflm_peer.map'}",
          f"-T{work / 'link.ld'}", *objs,
          str(lib), "-lm", "-o", str(elf)])
    parts = flash_parts((work / "tflm_peer.map").read_text())
    return Built(elf, flash_bytes(elf), tuple(ops), pinned(t), parts)
