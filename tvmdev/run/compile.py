"""Compiling a job into one program or firmware image with the board's C compiler.

The previous binary is reused when neither the command nor any source or header changed.
With ``stack_usage``, each source is compiled on its own into ``obj/`` with GCC's
``-fstack-usage -fcallgraph-info=su``, which write ``<object>.su`` and ``<object>.ci``
beside each object (one command for all sources would name them after the sources, and
two sources called gemm.c would overwrite each other's), and the objects are linked.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from ..errors import TvmdevError
from ..plan.fit import link_overflow
from .backend import Job
from .trees import compile_trees

STACK_USAGE_FLAGS = ("-fstack-usage", "-fcallgraph-info=su")


def object_dir(job: Job) -> Path:
    """Where a build with ``stack_usage`` puts its objects, .su and .ci files."""
    return job.build_dir / "obj"


def _tree_objects(job: Job, extra_cflags: tuple[str, ...], stack_usage: bool) -> list[Path]:
    """The objects of the pinned trees the job compiles, from the machine's cache; with
    ``stack_usage``, their call graphs are copied into the object folder afresh."""
    tc = job.board.toolchain
    if stack_usage:
        object_dir(job).mkdir(parents=True, exist_ok=True)
        for old in object_dir(job).glob("*.ci"):
            if not old.name[:2].isdigit():
                old.unlink()
    return compile_trees(tc.cc, [*tc.cflags, *extra_cflags, *(f"-D{d}" for d in tc.defines)],
                         job.trees, STACK_USAGE_FLAGS if stack_usage else (),
                         object_dir(job) if stack_usage else None)


def compile_program(job: Job, defines: list[str], extra_cflags: tuple[str, ...] = (),
                    stack_usage: bool = False) -> Path:
    """Compile and link ``job`` with the board's toolchain; returns the program."""
    tc = job.board.toolchain
    objects = _tree_objects(job, extra_cflags, stack_usage)
    flags = [*tc.cflags, *extra_cflags,
             *(f"-D{d}" for d in [*tc.defines, *job.defines, *defines]),
             *(f"-I{d}" for d in job.include_dirs)]
    link = [*(str(o) for o in objects), *job.link_flags, "-o", str(job.exe), *tc.ldflags]
    if stack_usage:
        objs = [object_dir(job) / f"{i:02d}-{src.stem}.o" for i, src in enumerate(job.sources)]
        cmds = [[tc.cc, *flags, *STACK_USAGE_FLAGS, "-c", str(src), "-o", str(obj)]
                for src, obj in zip(job.sources, objs, strict=True)]
        cmds.append([tc.cc, *tc.cflags, *extra_cflags, *(str(o) for o in objs), *link])
    else:
        cmds = [[tc.cc, *flags, *(str(s) for s in job.sources), *link]]
    digest = hashlib.sha256("\n".join(" ".join(cmd) for cmd in cmds).encode())
    for src in job.sources:
        digest.update(src.read_bytes())
    for inc in job.include_dirs:
        for h in sorted(inc.rglob("*.h")):
            digest.update(h.read_bytes())
    for flag in job.link_flags:
        if flag.startswith("-T"):
            digest.update(Path(flag[2:]).read_bytes())
    stamp = job.build_dir / ".build-stamp"
    if (job.exe.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest()
            and (not stack_usage or object_dir(job).is_dir())):
        return job.exe
    (job.build_dir / "build.cmd").write_text("".join(" ".join(cmd) + "\n" for cmd in cmds))
    if stack_usage:  # the job's own objects (NN-<source>.o, .su, .ci) are rebuilt
        for old in object_dir(job).iterdir():
            if old.name[:2].isdigit():
                old.unlink()
    for cmd in cmds:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            stamp.unlink(missing_ok=True)
            overflow = link_overflow(proc.stderr, job.model, job.compiled.memory, job.board,
                                     job.compiled.workspace_io, job.compiled.regions)
            if overflow is not None:
                raise overflow
            raise TvmdevError(f"the build failed ({tc.cc} exited {proc.returncode})",
                              str(job.build_dir), log=proc.stderr,
                              hint="the full command is in build.cmd in the build folder")
    stamp.write_text(digest.hexdigest())
    return job.exe
