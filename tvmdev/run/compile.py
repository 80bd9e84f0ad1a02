"""Compiling a job into one program or firmware image with the board's C compiler.

The previous binary is reused when neither the command nor any source or header changed.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from ..errors import TvmdevError
from . import external
from .backend import Job


def compile_program(job: Job, defines: list[str], extra_cflags: tuple[str, ...] = ()) -> Path:
    """Compile and link ``job`` with the board's toolchain; returns the program."""
    tc = job.board.toolchain
    objects: list[Path] = []
    for plat, root in job.external:
        objects += external.compile_objects(tc.cc, ["-O2"], plat, root,
                                            job.build_dir / f"{plat.name}-objects")
    cmd = [tc.cc, *tc.cflags, *extra_cflags,
           *(f"-D{d}" for d in [*tc.defines, *job.defines, *defines]),
           *(f"-I{d}" for d in job.include_dirs), *(str(s) for s in job.sources),
           *(str(o) for o in objects), *job.link_flags, "-o", str(job.exe), *tc.ldflags]
    digest = hashlib.sha256(" ".join(cmd).encode())
    for src in job.sources:
        digest.update(src.read_bytes())
    for inc in job.include_dirs:
        for h in sorted(inc.rglob("*.h")):
            digest.update(h.read_bytes())
    for flag in job.link_flags:
        if flag.startswith("-T"):
            digest.update(Path(flag[2:]).read_bytes())
    stamp = job.build_dir / ".build-stamp"
    if job.exe.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return job.exe
    (job.build_dir / "build.cmd").write_text(" ".join(cmd) + "\n")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        stamp.unlink(missing_ok=True)
        raise TvmdevError(f"the build failed ({tc.cc} exited {proc.returncode}):\n"
                          + proc.stderr.strip(), str(job.build_dir),
                          hint="the full command is in build.cmd in the build folder")
    stamp.write_text(digest.hexdigest())
    return job.exe
