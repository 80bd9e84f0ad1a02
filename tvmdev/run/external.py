"""Third-party source trees a platform can build against (KleidiAI), never copied into
a repository: taken from an environment variable (or an explicit path) and compiled
file by file with the flags the platform's data gives for each group."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from ..errors import TvmdevError, log_excerpt
from ..load.platform import Platform


def tree(plat: Platform, override: Path | None = None) -> Path | None:
    """The platform's external tree: ``override``, else its environment variable."""
    ext = plat.external
    if ext is None:
        return None
    root = override or (Path(os.environ[ext.env]) if os.environ.get(ext.env) else None)
    if root is None:
        return None
    if not root.is_dir():
        raise TvmdevError(f"{ext.env} is not a folder", str(root))
    missing = [f for _, files in ext.sources for f in files if not (root / f).is_file()]
    if missing:
        raise TvmdevError(f"not a {plat.name} source tree: {missing[0]} is missing", str(root),
                          hint=f"point {ext.env} at a checkout of {ext.repository} ({ext.tag})")
    return root


def compile_objects(cc: str, cflags: list[str], plat: Platform, root: Path, out: Path
                    ) -> list[Path]:
    """Compile the platform's external sources into ``out``; unchanged ones are reused."""
    out.mkdir(parents=True, exist_ok=True)
    objects = []
    assert plat.external is not None
    includes = [f"-I{root / i}" for i in plat.external.include]
    for flags, files in plat.external.sources:
        for rel in files:
            src = root / rel
            cmd = [cc, *cflags, *flags.split(), *includes, "-c", str(src)]
            key = hashlib.sha256((" ".join(cmd)).encode() + src.read_bytes()).hexdigest()[:16]
            obj = out / f"{src.stem}-{key}.o"
            if not obj.is_file():
                proc = subprocess.run([*cmd, "-o", str(obj)], capture_output=True, text=True)
                if proc.returncode != 0:
                    raise TvmdevError(f"cannot compile {rel} ({cc} exited {proc.returncode})",
                                      str(src), log=log_excerpt(proc.stderr, 40))
            objects.append(obj)
    return objects
