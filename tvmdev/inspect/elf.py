"""ELF inspection (pyelftools): device API completeness, selective build, no heap, and
footprint by component. Works on x86-64 host ELFs and Arm Cortex-M firmware. A device
function the linker removed because nothing calls it (the map beside the ELF says so:
:mod:`.linkmap`) is not missing.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from ..errors import TvmdevError
from ..naming import camel
from ..reading import check_regular
from .device_api import device_api_line, device_states, is_missing
from .linkmap import link_map_of
from .plan import pool_lines, read_plan

HEAP_SYMBOLS = ("malloc", "calloc", "realloc", "free", "_sbrk", "_sbrk_r", "_malloc_r",
                "_calloc_r", "_realloc_r", "_free_r", "_Znwm", "_Znwj", "_Znam", "_Znaj",
                "_ZdlPv", "_ZdaPv")
COMPONENTS = ("executor", "device layer", "kernels", "constants", "rest")
SECTION_KINDS = ("text", "rodata", "data", "bss")


@dataclass
class Symbol:
    name: str
    value: int
    size: int
    kind: str  # STT_FUNC, STT_OBJECT, ...
    bind: str
    section: str  # "" when undefined
    file: str  # the STT_FILE a local symbol follows, else ""

    @property
    def defined(self) -> bool:
        """Whether the symbol has a definition in the ELF (not only a reference)."""
        return self.section != ""


@dataclass
class HeapUse:
    symbol: str
    callers: list[str]  # functions (and their object files, where known) that call it


@dataclass
class Report:
    path: str
    machine: str
    device_kinds: dict[str, dict[str, str]] = field(default_factory=dict)  # kind -> fn -> state
    kernels_expected: list[str] = field(default_factory=list)
    kernels_present: list[str] = field(default_factory=list)
    heap: list[HeapUse] = field(default_factory=list)
    footprint: dict[str, dict[str, int]] = field(default_factory=dict)
    link_map: str | None = None  # the linker map read beside the ELF
    note: str | None = None  # why a map beside the ELF was not read
    device_memory: dict[str, Any] | None = None  # the plan's device pools and copies

    @property
    def missing_device_functions(self) -> list[str]:
        """``TVMDevice<Kind><Fn>`` functions of the model's kinds not defined (nor removed
        by the linker as never called)."""
        return [f"TVMDevice{camel(k)}{fn}" for k, fns in self.device_kinds.items()
                for fn, state in fns.items() if is_missing(state)]

    @property
    def unexpected_kernels(self) -> list[str]:
        """Kernels linked in that the plan did not select."""
        if not self.kernels_expected:
            return []
        return sorted(set(self.kernels_present) - set(self.kernels_expected))

    @property
    def missing_kernels(self) -> list[str]:
        """Kernels the plan selected that are not linked in."""
        return sorted(set(self.kernels_expected) - set(self.kernels_present))

    @property
    def ok(self) -> bool:
        """No finding: every device function, exactly the selected kernels, no heap."""
        return not (self.heap or self.missing_device_functions or self.unexpected_kernels
                    or self.missing_kernels)

    def to_json(self) -> dict[str, Any]:
        """The data as JSON-compatible values."""
        return {
            "elf": self.path, "machine": self.machine, "link_map": self.link_map,
            "device_api": self.device_kinds,
            "missing_device_functions": self.missing_device_functions,
            "kernels": {"expected": self.kernels_expected, "present": self.kernels_present,
                        "unexpected": self.unexpected_kernels, "missing": self.missing_kernels},
            "heap": [{"symbol": h.symbol, "callers": h.callers} for h in self.heap],
            "footprint": self.footprint, "ok": self.ok, "device_memory": self.device_memory,
        }


def _section_kind(name: str, flags: int, sh_type: str) -> str | None:
    if sh_type == "SHT_NOBITS" and flags & 0x2:
        return "bss"
    if not flags & 0x2:  # not allocated
        return None
    if flags & 0x4:  # executable
        return "text"
    if flags & 0x1:  # writable
        return "data"
    return "rodata"


class Elf:
    """An opened ELF with its symbols; raises TvmdevError for anything that is not one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        check_regular(path, "program")
        try:
            self._fh = path.open("rb")
        except OSError as exc:
            raise TvmdevError(f"cannot open: {exc.strerror}", str(path)) from None
        try:
            self.elf = ELFFile(self._fh)
            self.machine = self.elf["e_machine"]
            self.sections = list(self.elf.iter_sections())
            self.symbols = self._symbols()
        except (ELFError, struct.error, ValueError, OSError) as exc:
            self._fh.close()
            size = path.stat().st_size if path.exists() else 0
            with path.open("rb") as fh:
                magic = fh.read(4)
            if magic != b"\x7fELF":
                raise TvmdevError("not an ELF file", str(path),
                                  hint="pass the firmware or program that the build "
                                       "produced") from None
            raise TvmdevError(f"truncated or corrupt ELF ({size} bytes): {exc}", str(path),
                              hint="rebuild it") from None

    def close(self) -> None:
        """Close the ELF file."""
        self._fh.close()

    def _symbols(self) -> list[Symbol]:
        names = {i: s.name for i, s in enumerate(self.sections)}
        out: list[Symbol] = []
        for sec in self.sections:
            if not isinstance(sec, SymbolTableSection):
                continue
            current_file = ""
            for sym in sec.iter_symbols():
                st = sym["st_info"]["type"]
                if st == "STT_FILE":
                    current_file = sym.name
                    continue
                if not sym.name or st == "STT_SECTION":
                    continue
                shndx = sym["st_shndx"]
                section = names.get(shndx, "") if isinstance(shndx, int) else (
                    "" if shndx == "SHN_UNDEF" else str(shndx))
                bind = sym["st_info"]["bind"]
                out.append(Symbol(sym.name, sym["st_value"], sym["st_size"], st, bind,
                                  section, current_file if bind == "STB_LOCAL" else ""))
            if sec.name == ".symtab":
                break  # .dynsym only when there is no .symtab
        return out

    def find(self, name: str) -> list[Symbol]:
        """The symbols called ``name`` (functions and objects)."""
        return [s for s in self.symbols if s.name == name]

    # --- who calls a function ------------------------------------------------------

    def _targets(self, name: str) -> set[int]:
        """Addresses a call to ``name`` lands on: the symbol, or its PLT slot."""
        addrs = {s.value & ~1 for s in self.find(name) if s.defined and s.value}
        for sec in self.sections:
            if sec.name in (".rela.plt", ".rel.plt") and hasattr(sec, "iter_relocations"):
                dynsym: Any = self.elf.get_section(sec["sh_link"])
                plt = self.elf.get_section_by_name(".plt.sec") or self.elf.get_section_by_name(
                    ".plt")
                if plt is None:
                    continue
                got_to_index = {}
                for i, rel in enumerate(sec.iter_relocations()):
                    sym = dynsym.get_symbol(rel["r_info_sym"])
                    got_to_index[sym.name] = i
                if name in got_to_index:
                    i = got_to_index[name]
                    entry = 16
                    first = 0 if plt.name == ".plt.sec" else 16
                    addrs.add(plt["sh_addr"] + first + i * entry)
        return addrs

    def callers(self, name: str) -> list[str]:
        """Functions whose code calls ``name`` (x86-64 call rel32, Thumb-2 BL/BLX)."""
        targets = self._targets(name)
        if not targets:
            return []
        funcs = sorted((s for s in self.symbols if s.kind == "STT_FUNC" and s.defined
                        and s.size), key=lambda s: s.value)
        found: set[str] = set()
        for sec in self.sections:
            if sec["sh_type"] != "SHT_PROGBITS" or not sec["sh_flags"] & 0x4:
                continue
            data = sec.data()
            base = sec["sh_addr"]
            for site in self._call_sites(data, base, targets):
                owner = _containing(funcs, site)
                if owner is not None:
                    where = f" ({owner.file})" if owner.file else ""
                    found.add(owner.name + where)
        return sorted(found)

    def _call_sites(self, data: bytes, base: int, targets: set[int]) -> Iterable[int]:
        if self.machine == "EM_X86_64" or self.machine == "EM_386":
            i = data.find(b"\xe8")
            while i != -1 and i + 5 <= len(data):
                rel = struct.unpack_from("<i", data, i + 1)[0]
                if base + i + 5 + rel in targets:
                    yield base + i
                i = data.find(b"\xe8", i + 1)
        elif self.machine == "EM_ARM":
            for i in range(0, len(data) - 3, 2):
                hw1, hw2 = struct.unpack_from("<HH", data, i)
                if hw1 & 0xF800 != 0xF000 or hw2 & 0xC000 != 0xC000:
                    continue
                s = (hw1 >> 10) & 1
                j1, j2 = (hw2 >> 13) & 1, (hw2 >> 11) & 1
                i1, i2 = 1 - (j1 ^ s), 1 - (j2 ^ s)
                imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3FF) << 12) | (
                    (hw2 & 0x7FF) << 1)
                if s:
                    imm -= 1 << 25
                pc = base + i + 4
                target = pc + imm
                if not hw2 & 0x1000:  # BLX to Arm: align
                    target &= ~3
                if target in targets:
                    yield base + i
        elif self.machine == "EM_AARCH64":
            for i in range(0, len(data) - 3, 4):
                word = struct.unpack_from("<I", data, i)[0]
                if word >> 26 == 0b100101:  # BL
                    imm = word & 0x3FFFFFF
                    if imm & 0x2000000:
                        imm -= 1 << 26
                    if base + i + imm * 4 in targets:
                        yield base + i

    # --- footprint -----------------------------------------------------------------

    def footprint(self, classify: Any) -> dict[str, dict[str, int]]:
        """Bytes of text, rodata, data and bss by component (``classify(symbol)``)."""
        table = {c: dict.fromkeys(SECTION_KINDS, 0) for c in COMPONENTS}
        kinds = {}
        totals = dict.fromkeys(SECTION_KINDS, 0)
        for sec in self.sections:
            kind = _section_kind(sec.name, sec["sh_flags"], sec["sh_type"])
            if kind is None or sec.name.startswith((".debug", ".ARM.attributes")):
                continue
            kinds[sec.name] = kind
            totals[kind] += sec["sh_size"]
        for s in self.symbols:
            if not s.defined or not s.size or s.section not in kinds:
                continue
            comp = classify(s)
            if comp != "rest":
                table[comp][kinds[s.section]] += s.size
        for kind in SECTION_KINDS:
            table["rest"][kind] = max(0, totals[kind] - sum(table[c][kind] for c in COMPONENTS
                                                            if c != "rest"))
        return table


def _containing(funcs: list[Symbol], addr: int) -> Symbol | None:
    lo, hi = 0, len(funcs)
    while lo < hi:
        mid = (lo + hi) // 2
        if (funcs[mid].value & ~1) <= addr:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return None
    f = funcs[lo - 1]
    start = f.value & ~1
    return f if start <= addr < start + f.size else None


def inspect(path: Path, model_dir: Path | None = None, kinds: list[str] | None = None,
            kernels: list[str] | None = None) -> Report:
    """Inspect an ELF. ``model_dir`` (a folder made by `tvmdev aot`, or a build folder)
    gives the device kinds and the selected kernels to check."""
    model_prefix = ""
    library_files: set[str] = set()
    if model_dir is not None:
        plan = read_plan(model_dir)
        kinds, kernels = plan.kinds, plan.kernels
        model_prefix = f"tvmgen_{plan.model}_"
        library_files = plan.tree_files
    elf = Elf(path)
    try:
        report = Report(str(path), str(elf.machine))
        report.device_memory = plan.device_memory if model_dir is not None else None
        defined = {s.name for s in elf.symbols if s.defined and s.kind == "STT_FUNC"}
        referenced = {s.name for s in elf.symbols}
        link_map, report.note = link_map_of(path, {s.name: s.value & ~1 for s in elf.symbols
                                                   if s.defined and s.kind == "STT_FUNC"})
        report.link_map = str(link_map.path) if link_map else None
        removed = link_map.removed if link_map else frozenset()
        for kind in kinds or []:
            report.device_kinds[kind] = device_states(
                kind, defined, removed, referenced,
                memory=model_dir is not None and kind in plan.memory_kinds)
        expected = set(kernels or [])
        kernel_like = sorted(n for n in defined
                             if n in expected or _looks_like_kernel(n, kinds or []))
        report.kernels_present = kernel_like
        report.kernels_expected = sorted(kernels or [])
        for name in HEAP_SYMBOLS:
            if elf.find(name):
                report.heap.append(HeapUse(name, elf.callers(name)))
        device_files = {"posix.c", "cmsis.c", "zephyr.c", "metal.m"}
        kernel_names = set(kernel_like)

        def classify(s: Symbol) -> str:
            if model_prefix and s.name.startswith(model_prefix + "const_"):
                return "constants"
            if s.name.startswith("tvmgen_") or s.file.startswith("tvmgen_"):
                return "executor"
            if s.name.startswith("TVMDevice") or s.file in device_files:
                return "device layer"
            if s.name in kernel_names or s.name.startswith("tvmk_") or (
                    s.file and s.file.replace(".c", "") in _KERNEL_FILES) or (
                    s.file in library_files) or (library_files and s.name.startswith("arm_")):
                return "kernels"
            return "rest"

        report.footprint = elf.footprint(classify)
        return report
    finally:
        elf.close()


_KERNEL_FILES = {"gemm", "matmul", "add", "sub", "mul", "div", "maximum", "minimum", "relu",
                 "sigmoid", "tanh", "softmax", "reshape", "flatten", "transpose", "conv2d",
                 "maxpool2d", "avgpool2d", "depthwise_conv2d", "fully_connected", "clip", "pad",
                 "mean", "concat", "rawint_cast", "rawint_binary", "rawint_copy",
                 "signal_fft", "signal_bank", "signal_agc", "svdf", "lstm",
                 "strided_slice", "transpose_conv2d", "resize_bilinear"}


def _looks_like_kernel(name: str, kinds: list[str]) -> bool:
    if name.startswith("tvmk_") and name.endswith(("_f32", "_q4")):
        return True
    return any(name.startswith(f"{k}_") and name.endswith("_f32") for k in kinds)


def format_report(r: Report) -> list[str]:
    """The report as text lines."""
    lines = [f"{r.path}: {r.machine}", *([f"note: {r.note}"] if r.note else [])]
    lines += [device_api_line(kind, fns) for kind, fns in r.device_kinds.items()]
    lines += pool_lines(r.device_memory)
    if r.kernels_expected:
        if not r.unexpected_kernels and not r.missing_kernels:
            lines.append(f"kernels: exactly the {len(r.kernels_expected)} selected: "
                         + ", ".join(r.kernels_expected))
        else:
            if r.unexpected_kernels:
                lines.append("kernels NOT selected but linked: " + ", ".join(
                    r.unexpected_kernels))
            if r.missing_kernels:
                lines.append("kernels selected but missing: " + ", ".join(r.missing_kernels))
    else:
        lines.append("kernels: " + (", ".join(r.kernels_present) or "none found"))
    if r.heap:
        for h in r.heap:
            shown = h.callers[:8]
            more = f" (+{len(h.callers) - 8} more; --json lists all)" if len(h.callers) > 8 else ""
            who = ", ".join(shown) + more if h.callers else "no direct caller found"
            lines.append(f"HEAP: {h.symbol} is linked in, called from: {who}")
    else:
        lines.append("heap: none (no malloc, calloc, realloc, free, _sbrk or operator new)")
    lines.append("")
    lines.append(f"{'component':<14}" + "".join(f"{k:>10}" for k in SECTION_KINDS)
                 + f"{'flash':>10}{'ram':>10}")
    for comp, row in r.footprint.items():
        flash = row["text"] + row["rodata"] + row["data"]
        ram = row["data"] + row["bss"]
        lines.append(f"{comp:<14}" + "".join(f"{row[k]:>10}" for k in SECTION_KINDS)
                     + f"{flash:>10}{ram:>10}")
    return lines
