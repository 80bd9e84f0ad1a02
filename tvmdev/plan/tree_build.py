"""A board kernel library's tree at generation time: CMSIS-NN's buffer sizes evaluated by
its own functions (a host program, built once per tree and cached), and the tree's
sources the selected kernels reach (what a build compiles: nothing else of the tree).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from ..errors import TvmdevError, log_excerpt
from ..load.kernel_tree import TreeLibrary
from ..resources import cache_dir

_DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(arm_\w+)\s*\(", re.M)
_REFERENCE = re.compile(r"\barm_\w+\b")
# A table the tree defines (``const uint16_t sigmoid_table_uint16[256] = {``): a kernel's
# ``calls`` names it when a function it calls reads it.
_TABLE = re.compile(r"^(?:const\s+)?[A-Za-z_]\w*\s+([A-Za-z_]\w*)\s*\[[^\]\n]*\]\s*=", re.M)


def host_cc() -> str:
    """The host C compiler ($CC, else cc or gcc)."""
    for cc in (os.environ.get("CC"), "cc", "gcc"):
        if cc and shutil.which(cc):
            return cc
    raise TvmdevError("no host C compiler (cc or gcc) to evaluate the kernel library's "
                      "buffer sizes", hint="install gcc, or set CC")


def probe(lib: TreeLibrary, root: Path) -> Path:
    """The library's buffer-size program for the tree at ``root``, built if needed."""
    cc = host_cc()
    if lib.probe_source is None:
        raise TvmdevError(f"internal error: library {lib.name} has no buffer-size probe")
    sources = [lib.probe_source, *(root / s for s in lib.probe_tree_sources)]
    headers = sorted(p for i in lib.pinned().include for p in (root / i).rglob("*.h"))
    digest = hashlib.sha256(cc.encode())
    for f in [*sources, *headers]:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    exe = cache_dir() / "probes" / f"{lib.name}-{digest.hexdigest()[:16]}"
    if exe.is_file():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=exe.parent, prefix=exe.name + ".")
    os.close(fd)
    cmd = [cc, "-std=c99", "-O1", *(f"-I{root / i}" for i in lib.pinned().include),
           *map(str, sources), "-o", tmp]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        os.unlink(tmp)
        raise TvmdevError(f"cannot build {lib.name}'s buffer-size probe ({cc} exited "
                          f"{proc.returncode})", str(root), log=log_excerpt(proc.stderr, 30),
                          hint=f"is it {lib.pinned().pin.repository} at {lib.pinned().pin.tag}?")
    os.replace(tmp, exe)
    return exe


def buffer_sizes(lib: TreeLibrary, root: Path, requests: list[str]) -> list[int]:
    """The bytes CMSIS-NN asks for, one per probe request line."""
    if not requests:
        return []
    proc = subprocess.run([str(probe(lib, root))], input="\n".join(requests) + "\n",
                          capture_output=True, text=True, timeout=60)
    sizes = [int(v) for v in proc.stdout.split()]
    if proc.returncode != 0 or len(sizes) != len(requests) or min(sizes) < 0:
        bad = next((r for r, v in zip(requests, sizes, strict=False) if v < 0), requests[0])
        raise TvmdevError(f"internal error: {lib.name}'s buffer-size probe refused '{bad}'")
    return sizes


@cache
def _definitions(src_root: Path) -> dict[str, Path]:
    """Every non-static function and table of the tree's sources -> the file defining it."""
    defs: dict[str, Path] = {}
    for f in sorted(src_root.rglob("*.c")):
        text = f.read_text(errors="replace")
        for m in [*_DEFINITION.finditer(text), *_TABLE.finditer(text)]:
            defs.setdefault(m.group(1), f)
    return defs


def reached_sources(lib: TreeLibrary, root: Path, calls: list[str]) -> list[Path]:
    """The tree's source files that define ``calls`` and what they call in turn."""
    tree = lib.pinned()
    assert tree.sources is not None
    defs = _definitions(root / tree.sources)
    missing = [c for c in calls if c not in defs]
    if missing:
        raise TvmdevError(f"the {lib.name} tree defines no {missing[0]}", str(root),
                          hint=f"tvmdev's kernels are written for {tree.pin.tag}")
    todo, seen, files = list(calls), set(), []
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            seen.add(name)
            continue
        seen.add(name)
        if defs[name] not in files:
            files.append(defs[name])
            todo += _REFERENCE.findall(defs[name].read_text(errors="replace"))
    return sorted(files)
