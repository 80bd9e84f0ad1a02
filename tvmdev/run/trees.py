"""What a build compiles of the pinned trees (CMSIS-NN's reached sources, KleidiAI's
micro-kernels): one compile cache for every tree, shared by every build on the machine.

An object is keyed by its whole compile command (the board's compiler and flags, the
tree's include folders and defines, the group's flags), the source's bytes and the
tree's headers, so a second run, another test or another model on the same board reuses
it, as ccache would. Objects are written under a temporary name and renamed, so two
builds at once never see half an object. With ``stack_usage`` the objects are compiled
with GCC's stack flags, and their ``.ci`` call graphs are copied beside the build's own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import TvmdevError, log_excerpt
from ..load.platform import Platform
from ..load.tree import Tree, locate
from ..resources import cache_dir


@dataclass(frozen=True)
class TreeBuild:
    """A tree a build compiles: its root, and its files by the flags they take."""

    tree: Tree
    root: Path
    groups: tuple[tuple[str, tuple[Path, ...]], ...]  # (flags, sources)
    # Compiled with the board's flags (CMSIS-NN: its -mcpu picks the code path); else
    # with -O2 and each group's flags alone (KleidiAI: each group gives its -march).
    board_flags: bool = True


@cache
def _headers_digest(root: Path, include: tuple[str, ...]) -> str:
    """A digest of the tree's headers (names, sizes and times: cheap, and a changed
    header changes it)."""
    digest = hashlib.sha256()
    for inc in include:
        for h in sorted((root / inc).rglob("*.h")):
            st = h.stat()
            digest.update(f"{h}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _compile_one(cmd: list[str], src: Path, obj: Path, extra: tuple[str, ...]) -> None:
    """Compile ``src`` to ``obj`` (and its ``extra`` side files) under temporary names,
    then rename them into place."""
    with tempfile.TemporaryDirectory(dir=obj.parent, prefix=".tmp-") as tmp:
        out = Path(tmp) / obj.name
        proc = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise TvmdevError(f"cannot compile {src.name} of the pinned tree ({cmd[0]} "
                              f"exited {proc.returncode})", str(src),
                              log=log_excerpt(proc.stderr, 40))
        for suffix in extra:  # the side files first: the object is what marks it done
            side = out.with_suffix(suffix)
            if side.is_file():
                os.replace(side, obj.with_suffix(suffix))
        os.replace(out, obj)


def compile_trees(cc: str, cflags: list[str], builds: list[TreeBuild],
                  stack_flags: tuple[str, ...] = (), ci_dir: Path | None = None
                  ) -> list[Path]:
    """The objects of ``builds``' sources, compiled with ``cc`` and ``cflags`` (the
    board's, for the builds that take them) where the cache does not have them yet.
    ``stack_flags``: GCC's stack-usage flags, whose ``.ci`` files go into ``ci_dir``."""
    store = cache_dir() / "objects"
    store.mkdir(parents=True, exist_ok=True)
    objects = []
    for b in builds:
        includes = [f"-I{b.root / i}" for i in b.tree.include]
        defines = [f"-D{d}" for d in b.tree.defines]
        headers = _headers_digest(b.root, b.tree.include)
        for flags, sources in b.groups:
            for src in sources:
                cmd = [cc, *(cflags if b.board_flags else ["-O2"]), *flags.split(),
                       *stack_flags, *defines, *includes, "-c", str(src)]
                key = hashlib.sha256("\0".join([*cmd, headers]).encode() + b"\0"
                                     + src.read_bytes()).hexdigest()[:20]
                obj = store / f"{b.tree.name}-{src.stem}-{key}.o"
                if not obj.is_file():
                    _compile_one(cmd, src, obj, (".su", ".ci") if stack_flags else ())
                if ci_dir is not None and obj.with_suffix(".ci").is_file():
                    shutil.copyfile(obj.with_suffix(".ci"), ci_dir / f"{obj.stem}.ci")
                objects.append(obj)
    return objects


def platform_tree(plat: Platform, given: Path | None = None) -> TreeBuild | None:
    """What a build compiles of ``plat``'s tree (KleidiAI's micro-kernels, each group with
    its own -march): found from ``given`` or the tree's environment variable; None when
    the platform has no tree or it is not there."""
    tree = plat.tree
    root = locate(tree, given) if tree is not None else None
    if tree is None or root is None:
        return None
    return TreeBuild(tree, root, tuple((flags, tuple(root / f for f in files))
                                       for flags, files in tree.compile), board_flags=False)
