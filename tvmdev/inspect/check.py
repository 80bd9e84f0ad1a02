"""`tvmdev check`: user-edited device and kernel sources against the generated API.

Each source is preprocessed (by the platform's compiler when it is installed, else by
gcc or cpp) against minimal fake system headers that tvmdev ships, parsed with pycparser,
and every function definition is compared, by types, with what the generated headers
declare and the kernel registry expects.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_generator, c_parser
from pycparser.c_parser import ParseError

from ..errors import TvmdevError
from ..load.device_kernels import variants
from ..load.library import load_shipped_library
from ..load.platform import Platform, all_platforms, platform_by_name
from ..model.cnames import MEMORY_FUNCTIONS
from ..model.device import DeviceSpec, specs_from_manifest
from ..model.ops import OPS, kernel_params, memory_params
from ..reading import read_bytes
from ..resources import runtime_dir
from ..write.manifest import MANIFEST, MANIFEST_HINT, read_manifest

DEVICE_FUNCTIONS = ("Init", "Activate", "Open", "Close", "Deactivate", "Destroy")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else (
            f"{self.file}: {self.message}")


Signature = tuple[str, tuple[str, ...]]


def _type_str(node: c_ast.Node) -> str:
    """A declaration's type without its name: ``const float *``."""
    gen = c_generator.CGenerator()
    node = _strip_names(node)
    text = gen.visit(node) if not isinstance(node, c_ast.Typename) else gen.visit(node)
    return " ".join(text.replace("*", " * ").split())


def _strip_names(node: c_ast.Node) -> c_ast.Node:
    import copy
    node = copy.deepcopy(node)

    class V(c_ast.NodeVisitor):  # type: ignore[misc]
        def visit_TypeDecl(self, n: c_ast.TypeDecl) -> None:
            n.declname = None
            self.generic_visit(n)

    V().visit(node)
    return node


def signature(decl: c_ast.Decl) -> Signature:
    """(return type, parameter types) of a function declaration, names dropped."""
    fn = decl.type
    assert isinstance(fn, c_ast.FuncDecl)
    params: list[str] = []
    for p in (fn.args.params if fn.args else []):
        if isinstance(p, c_ast.EllipsisParam):
            params.append("...")
            continue
        t = _type_str(p.type)
        if t != "void":
            params.append(t)
    return _type_str(fn.type), tuple(params)


def _show(sig: Signature) -> str:
    return f"{sig[0]} ({', '.join(sig[1]) or 'void'})"


def _preprocess(source: Path, plat: Platform, includes: list[Path],
                defines: list[str]) -> tuple[str, str]:
    """The preprocessed text of ``source`` and the preprocessor used."""
    cc = shutil.which(plat.check.compiler) or shutil.which("gcc") or shutil.which("cpp")
    if cc is None:
        raise TvmdevError("no C preprocessor found (tried "
                          f"{plat.check.compiler}, gcc, cpp)", hint="install gcc")
    cmd = [cc, "-E", "-P", "-nostdinc", "-std=c99", f"-I{runtime_dir() / 'fake_libc'}",
           *(f"-I{p}" for p in plat.check.include), *(f"-I{p}" for p in includes),
           *(f"-D{d}" for d in defines), str(source)]
    if Path(cc).name == "cpp":
        cmd.remove("-std=c99")
    proc = subprocess.run(cmd, capture_output=True)
    # Sources need not be UTF-8 (a Latin-1 comment): bytes that are not read as '?'.
    out, err = (proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
    if proc.returncode != 0:
        raise TvmdevError("cannot preprocess: " + (err.strip().splitlines() or ["?"])[0],
                          str(source))
    return out, Path(cc).name


def _parse(text: str, source: Path) -> c_ast.FileAST:
    try:
        return c_parser.CParser().parse(text, str(source))
    except ParseError as exc:
        raise TvmdevError(f"cannot parse: {exc}", str(source),
                          hint="tvmdev check reads C99 without compiler extensions") from None


@dataclass
class _Parsed:
    """The functions of one source: declarations (from headers), definitions (with their
    line in the source) and what is wrong with the definitions themselves."""

    decls: dict[str, c_ast.Decl]
    defs: dict[str, tuple[c_ast.FuncDef, int]]
    problems: list[Problem]


def _read(src: Path, rel: str, plat: Platform, includes: list[Path],
          defines: list[str]) -> _Parsed:
    """Preprocess and parse ``src``; a function defined twice, or K&R style, is a problem."""
    lines = read_bytes(src, "source").decode("utf-8", "replace").splitlines()
    text, _ = _preprocess(src, plat, includes, defines)
    parsed = _Parsed({}, {}, [])
    seen: dict[str, int] = {}
    for node in _parse(text, src).ext:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            parsed.decls.setdefault(node.name, node)
        elif isinstance(node, c_ast.FuncDef):
            name = node.decl.name
            seen[name] = seen.get(name, 0) + 1
            line = _line_in(name, lines, seen[name])
            if name in parsed.defs:
                parsed.problems.append(Problem(rel, line, f"{name} is defined twice (first "
                                               f"at line {parsed.defs[name][1]})"))
            elif node.param_decls is not None:
                parsed.problems.append(Problem(rel, line, f"{name} is defined K&R style "
                                               "(a list of names); define it with a "
                                               "prototype"))
                parsed.defs[name] = (node, line)
            else:
                parsed.defs[name] = (node, line)
    return parsed


def _line_in(name: str, lines: list[str], nth: int = 1) -> int:
    """The line of the ``nth`` definition of ``name`` in the original source (after -P
    the preprocessed lines don't map back)."""
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        if name + "(" in stripped.replace(" (", "(") and not stripped.endswith(";"):
            nth -= 1
            if nth == 0:
                return i
    return 0


def check_folder(folder: Path) -> list[Problem]:
    """Every mismatch in a folder made by `tvmdev new-device`."""
    if not folder.is_dir():
        raise TvmdevError("no such folder" if not folder.exists() else "is not a folder",
                          str(folder), hint="run tvmdev check on a new-device output folder")
    specs = specs_from_manifest(read_manifest(folder).get("devices"),
                                str(folder / MANIFEST), all_platforms(), MANIFEST_HINT)
    if not specs:
        raise TvmdevError("no devices here (no .tvmdev.json from tvmdev new-device)",
                          str(folder), hint="run tvmdev check on a new-device output folder")
    problems: list[Problem] = []
    for spec in specs:
        for pname in spec.platforms:
            problems += _check_device(folder, spec, platform_by_name(pname))
        # Kernels the device's library claims, against the registry's calling convention
        # (a built-in kind ships its kernels instead of scaffolding them).
        if not any(platform_by_name(p).builtin_kind for p in spec.platforms):
            for op in spec.ops:
                problems += _check_kernel(folder, spec, op)
    return problems


def _check_device(folder: Path, spec: DeviceSpec, plat: Platform) -> list[Problem]:
    """The six device functions of one platform's implementation (and CopyTo, CopyFrom
    and Wait of a kind with memory) against the headers."""
    src = folder / plat.device_source.format(name=spec.name)
    rel = str(src.relative_to(folder))
    if not os.path.lexists(src):
        return [Problem(rel, 0, "missing (the device implementation)")]
    if src.suffix != ".c":  # Objective-C (Metal): pycparser reads C only
        return []
    defines = [d.format(macro=f"TVM_DEVICE_{spec.upper}") for d in plat.check.defines]
    parsed = _read(src, rel, plat, [folder / "include"], defines)
    decls, defs, problems = parsed.decls, parsed.defs, parsed.problems
    for fn in DEVICE_FUNCTIONS + (MEMORY_FUNCTIONS if spec.memory is not None else ()):
        fname = f"TVMDevice{spec.camel}{fn}"
        if fname not in defs:
            problems.append(Problem(rel, 0, f"{fname} is not defined"))
            continue
        node, line = defs[fname]
        if node.param_decls is not None:  # K&R: reported above
            continue
        if fname not in decls:
            problems.append(Problem(rel, line, f"{fname} is not declared by the "
                                    "generated headers (regenerate with tvmdev)"))
            continue
        want, got = signature(decls[fname]), signature(node.decl)
        if want != got:
            problems.append(Problem(rel, line, f"{fname} is {_show(got)}, the "
                                    f"generated header declares {_show(want)}"))
    return problems


def _check_kernel(folder: Path, spec: DeviceSpec, op: str) -> list[Problem]:
    """One scaffolded kernel file, each of its forms (float, int8) against the registry's
    calling convention."""
    src = folder / f"src/kernels/{spec.name}/{op}.c"
    rel = str(src.relative_to(folder))
    portable = load_shipped_library(runtime_dir() / "kernels/portable/kernels.yaml",
                                    "portable", "portable")
    forms = variants(spec.name, op, portable)
    if not os.path.lexists(src):
        return [Problem(rel, 0, f"missing (kernel {', '.join(v.name for v in forms)})")]
    plat = platform_by_name(spec.platforms[0])
    parsed = _read(src, rel, plat, [folder / "include", runtime_dir() / "kernels/portable"], [])
    problems = list(parsed.problems)
    for v in forms:
        if v.name not in parsed.defs:
            problems.append(Problem(rel, 0, f"kernel {v.name} is not defined"))
            continue
        node, line = parsed.defs[v.name]
        if node.param_decls is not None:  # K&R: reported
            continue
        params = (memory_params(OPS[op], spec.name, dict(v.dtypes), v.params_struct)
                  if spec.memory is not None  # addresses in its memory, scratch last
                  else kernel_params(OPS[op], dict(v.dtypes), v.params_struct))
        want = ("int32_t", tuple(" ".join(t.replace("*", " * ").split()) for t, _ in params))
        got = signature(node.decl)
        if got != want:
            problems.append(Problem(rel, line, f"kernel {v.name} is {_show(got)}, the "
                                    f"registry expects {_show(want)}"))
    return problems
