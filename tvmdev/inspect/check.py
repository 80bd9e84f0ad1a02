"""`tvmdev check`: user-edited device and kernel sources against the generated API.

Each source is preprocessed (by the platform's compiler when it is installed, else by
gcc or cpp) against minimal fake system headers that tvmdev ships, parsed with pycparser,
and every function definition is compared, by types, with what the generated headers
declare and the kernel registry expects.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_generator, c_parser
from pycparser.c_parser import ParseError

from ..errors import TvmdevError
from ..load.platform import Platform, platform_by_name
from ..model.device import DeviceSpec
from ..model.ops import OPS, kernel_params
from ..resources import runtime_dir
from ..write.manifest import read_manifest

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
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TvmdevError("cannot preprocess: " + (proc.stderr.strip().splitlines() or ["?"])[0],
                          str(source))
    return proc.stdout, Path(cc).name


def _parse(text: str, source: Path) -> c_ast.FileAST:
    try:
        return c_parser.CParser().parse(text, str(source))
    except ParseError as exc:
        raise TvmdevError(f"cannot parse: {exc}", str(source),
                          hint="tvmdev check reads C99 without compiler extensions") from None


def _functions(ast: c_ast.FileAST, source: Path, text_lines: list[str]
               ) -> tuple[dict[str, c_ast.Decl], dict[str, tuple[c_ast.FuncDef, int]]]:
    """Declarations (from headers) and definitions (with their line in the source)."""
    decls: dict[str, c_ast.Decl] = {}
    defs: dict[str, tuple[c_ast.FuncDef, int]] = {}
    for node in ast.ext:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            decls.setdefault(node.name, node)
        elif isinstance(node, c_ast.FuncDef):
            defs[node.decl.name] = (node, _line_in(source, node.decl.name, text_lines))
    return decls, defs


def _line_in(source: Path, name: str, lines: list[str]) -> int:
    """The line of the definition of ``name`` in the original source (after -P the
    preprocessed lines don't map back)."""
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        if name + "(" in stripped.replace(" (", "(") and not stripped.endswith(";"):
            return i
    return 0


def check_folder(folder: Path) -> list[Problem]:
    """Every mismatch in a folder made by `tvmdev new-device`."""
    manifest = read_manifest(folder)
    devices = manifest.get("devices") or {}
    if not devices:
        raise TvmdevError("no devices here (no .tvmdev.json from tvmdev new-device)",
                          str(folder), hint="run tvmdev check on a new-device output folder")
    problems: list[Problem] = []
    for name, data in sorted(devices.items()):
        spec = DeviceSpec.from_json(name, data)
        for pname in spec.platforms:
            problems += _check_device(folder, spec, platform_by_name(pname))
        # Kernels the device's library claims, against the registry's calling convention
        # (a built-in kind ships its kernels instead of scaffolding them).
        if not any(platform_by_name(p).builtin_kind for p in spec.platforms):
            for op in spec.ops:
                problems += _check_kernel(folder, spec, op)
    return problems


def _check_device(folder: Path, spec: DeviceSpec, plat: Platform) -> list[Problem]:
    """The six device functions of one platform's implementation against the headers."""
    src = folder / plat.device_source.format(name=spec.name)
    rel = str(src.relative_to(folder))
    if not src.is_file():
        return [Problem(rel, 0, "missing (the device implementation)")]
    if src.suffix != ".c":  # Objective-C (Metal): pycparser reads C only
        return []
    defines = [d.format(macro=f"TVM_DEVICE_{spec.upper}") for d in plat.check.defines]
    text, _ = _preprocess(src, plat, [folder / "include"], defines)
    decls, defs = _functions(_parse(text, src), src, src.read_text().splitlines())
    problems = []
    for fn in DEVICE_FUNCTIONS:
        fname = f"TVMDevice{spec.camel}{fn}"
        if fname not in defs:
            problems.append(Problem(rel, 0, f"{fname} is not defined"))
            continue
        node, line = defs[fname]
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
    """One scaffolded kernel against the registry's calling convention."""
    src = folder / f"src/kernels/{spec.name}/{op}.c"
    rel = str(src.relative_to(folder))
    kname = f"{spec.name}_{op}_f32"
    if not src.is_file():
        return [Problem(rel, 0, f"missing (kernel {kname})")]
    plat = platform_by_name(spec.platforms[0])
    text, _ = _preprocess(src, plat, [folder / "include", runtime_dir() / "kernels/portable"],
                          [])
    _, defs = _functions(_parse(text, src), src, src.read_text().splitlines())
    if kname not in defs:
        return [Problem(rel, 0, f"kernel {kname} is not defined")]
    node, line = defs[kname]
    want = ("int32_t", tuple(" ".join(t.replace("*", " * ").split())
                             for t, _ in kernel_params(OPS[op])))
    got = signature(node.decl)
    if got != want:
        return [Problem(rel, line, f"kernel {kname} is {_show(got)}, the registry expects "
                        f"{_show(want)}")]
    return []
