"""The worst-case stack of a firmware's call tree, from what GCC and the linker left.

GCC's ``-fcallgraph-info=su`` writes, per object, the functions it compiled with their
frame size (what ``-fstack-usage`` reports) and every call they make. Functions that come
from libraries compiled without it (libm's expf, libgcc's soft-float helpers, memcpy) are
read from the linked ELF instead: their frame is what their code pushes and subtracts
from sp, their calls are their ``bl`` and tail-call branches (``objdump -d``).

The worst case below a function is its frame plus the worst over its calls. A call
through a pointer, recursion, a frame of dynamic size or a function with no information
makes it unbounded: the figure then covers only the calls that could be followed, and
the reasons are listed.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TvmdevError, log_excerpt

INDIRECT = "__indirect_call"

_NODE = re.compile(r'^node: \{ title: "([^"]*)" label: "([^"]*)"')
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"'
                   r'(?: label: "([^"]*)")?')
_FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)$")


@dataclass
class Function:
    """One function of the call graph."""

    name: str  # the symbol
    frame: int | None  # bytes; None: unknown
    kind: str  # "static", "dynamic", "dynamic,bounded", or "elf" (read from the code)
    where: str  # file:line, or the ELF
    calls: list[tuple[str, str]] = field(default_factory=list)  # (callee key, call site)


@dataclass(frozen=True)
class StackUsage:
    """The worst-case stack below ``root``, and how it was found."""

    root: str
    peak_bytes: int  # bounded: the worst case; else the worst over what could be followed
    bounded: bool
    path: tuple[str, ...]  # the deepest chain of calls
    unbounded_by: tuple[str, ...]  # calls through pointers, recursion, unknown functions
    method: str
    measured_bytes: int | None = None  # what a run used, when the firmware measured it

    def to_json(self) -> dict[str, Any]:
        """The figures as build.json records them."""
        doc: dict[str, Any] = {"peak_bytes": self.peak_bytes, "bounded": self.bounded,
                               "root": self.root, "path": list(self.path),
                               "unbounded_by": list(self.unbounded_by),
                               "method": self.method}
        if self.measured_bytes is not None:
            doc["measured_bytes"] = self.measured_bytes
        return doc

    def summary(self) -> str:
        """One line for people (build.json has the call sites)."""
        if self.bounded:
            text = (f"stack: {self.peak_bytes} bytes worst case below {self.root} "
                    f"({' > '.join(self.path[1:])})")
        else:
            reasons = dict.fromkeys(re.sub(r" \(.*\)$", "", r) for r in self.unbounded_by)
            text = (f"stack: unbounded below {self.root} ({'; '.join(reasons)}), "
                    f"{self.peak_bytes} bytes over the calls that could be followed")
        if self.measured_bytes is not None:
            text += f"; this run used {self.measured_bytes} bytes"
        return text


def read_callgraph(ci_files: list[Path]) -> dict[str, Function]:
    """Every function GCC compiled (``-fcallgraph-info=su``), by its title: the symbol, or
    ``file:symbol`` for a static function. Nodes for functions only declared there (no
    frame) are kept as unknown unless another file defines them."""
    funcs: dict[str, Function] = {}
    for ci in ci_files:
        for line in ci.read_text().splitlines():
            node = _NODE.match(line)
            if node:
                title, label = node.groups()
                frame = _FRAME.search(label)
                name = title.rsplit(":", 1)[-1]
                where = label.split("\\n")[1] if "\\n" in label else ""
                if frame:
                    old = funcs.get(title)
                    calls = old.calls if old is not None else []
                    funcs[title] = Function(name, int(frame[1]), frame[2], where, calls)
                elif title not in funcs:
                    funcs[title] = Function(name, None, "builtin" if "<built-in>" in label
                                            else "declared", where)
                continue
            edge = _EDGE.match(line)
            if edge:
                src, dst, site = edge.groups()
                funcs.setdefault(src, Function(src.rsplit(":", 1)[-1], None, "declared", ""))
                funcs[src].calls.append((dst, site or ""))
    return funcs


_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_INSN = re.compile(r"^\s*([0-9a-f]+):\s+([a-z][\w.]*)\s*(.*)$")
_TARGET = re.compile(r"^([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")


def _registers(text: str) -> list[str]:
    """The registers of a list such as {r4, r5-r7, lr} or {d8-d15}."""
    regs: list[str] = []
    for part in text.strip("{} ").split(","):
        part = part.strip()
        m = re.fullmatch(r"([a-z]+)(\d+)-[a-z]*(\d+)", part)
        if m:
            regs += [f"{m[1]}{i}" for i in range(int(m[2]), int(m[3]) + 1)]
        elif part:
            regs.append(part)
    return regs


def read_elf_code(disassembly: str) -> dict[str, Function]:
    """Functions of a Thumb ELF from ``objdump -d``, by symbol: the bytes their code pushes
    and subtracts from sp (all of it, as if every push ran: an upper bound), and their calls
    (``bl``, and branches to another function: tail calls). A branch through a register
    other than lr is an indirect call; sp set from a register is a dynamic frame."""
    funcs: dict[str, Function] = {}
    current: Function | None = None
    for line in disassembly.splitlines():
        head = _FUNC.match(line)
        if head:
            name = head[2]
            current = funcs.setdefault(name, Function(name, 0, "elf", "ELF"))
            continue
        insn = _INSN.match(line)
        if current is None or insn is None:
            continue
        op, args = insn[2], re.split(r"[;@]", insn[3])[0].strip()
        base = op.split(".")[0]
        assert current.frame is not None
        if base in ("push", "vpush") or (base == "stmdb" and args.startswith("sp!")):
            regs = _registers(args[args.index("{"):] if "{" in args else args)
            current.frame += sum(8 if r.startswith("d") else 4 for r in regs)
        elif base in ("sub", "subw") and re.match(r"sp,\s*(sp,\s*)?#", args):
            current.frame += int(args.rsplit("#", 1)[1].split()[0], 0)
        elif base in ("sub", "subw", "mov") and re.match(r"sp,\s*(sp,\s*)?[rf]", args):
            current.kind = "dynamic"
        elif base.startswith(("b", "cb")):
            # A branch (bl, b, bne, cbz, ...) to another function is a call; bl to
            # itself too. Through a register (blx r3, bx r3) it is indirect.
            target = _TARGET.match(args)
            site = f"{current.name}+0x{insn[1]}"
            if target is not None:
                if base == "bl" or target[2] != current.name:
                    current.calls.append((target[2], site))
            elif base in ("blx", "bx") and args != "lr":
                current.calls.append((INDIRECT, site))
    return funcs


def disassemble(elf: Path, objdump: str) -> str:
    """``objdump -d`` of the ELF, for the stack use of code without .su files."""
    try:
        proc = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(elf)],
                              capture_output=True, text=True)
    except FileNotFoundError:
        raise TvmdevError(f"{objdump} is not installed (the stack analysis reads the "
                          "firmware's library code with it)") from None
    if proc.returncode != 0:
        raise TvmdevError(f"{objdump} failed (exit {proc.returncode})", str(elf),
                          log=log_excerpt(proc.stderr, 20))
    return proc.stdout


def worst_case(root: str, compiled: dict[str, Function], library: dict[str, Function],
               method: str) -> StackUsage:
    """The worst-case stack below ``root`` (a symbol) over both call graphs."""
    unbounded: list[str] = []
    memo: dict[str, tuple[int, tuple[str, ...]]] = {}

    def resolve(key: str) -> tuple[str, Function | None]:
        f = compiled.get(key)
        if f is not None and f.frame is not None:
            return key, f
        name = key.rsplit(":", 1)[-1]
        g = compiled.get(name)
        if g is not None and g.frame is not None:
            return name, g
        if name in library:
            return f"elf:{name}", library[name]
        return key, f

    def walk(key: str, stack: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
        key, f = resolve(key)
        if key in memo:
            return memo[key]
        name = key.rsplit(":", 1)[-1]
        if f is None or f.frame is None:
            if f is not None and f.kind == "builtin":
                return 0, ()  # expanded in place: no call is left in the firmware
            unbounded.append(f"no stack information for {name}")
            return 0, (name,)
        if key in stack:
            cycle = [k.rsplit(":", 1)[-1] for k in stack[stack.index(key):]] + [name]
            unbounded.append("recursion: " + " -> ".join(cycle))
            return 0, ()
        if f.kind == "dynamic":
            unbounded.append(f"a frame of dynamic size in {name} ({f.where})")
        best: tuple[int, tuple[str, ...]] = (0, ())
        for callee, site in f.calls:
            if callee == INDIRECT:
                unbounded.append(f"a call through a pointer in {name} ({site})")
                continue
            below = walk(callee, (*stack, key))
            if below[0] > best[0]:
                best = below
        result = (f.frame + best[0], (name, *best[1]))
        memo[key] = result
        return result

    peak, path = walk(root, ())
    reasons = tuple(dict.fromkeys(unbounded))
    return StackUsage(root, peak, not reasons, path, reasons, method)


def analyse(ci_files: list[Path], elf: Path, objdump: str, root: str) -> StackUsage:
    """The worst-case stack below ``root`` in firmware ``elf`` built with
    ``-fstack-usage -fcallgraph-info=su`` (``ci_files``: the .ci files it wrote)."""
    compiled = read_callgraph(ci_files)
    if not any(f.name == root and f.frame is not None for f in compiled.values()):
        raise TvmdevError(f"{root} is in none of the call graphs GCC wrote", str(elf))
    library = read_elf_code(disassemble(elf, objdump))
    method = ("gcc -fstack-usage -fcallgraph-info=su for the compiled code; "
              "pushes and sp subtractions in the ELF (objdump -d) for library functions")
    return worst_case(root, compiled, library, method)
