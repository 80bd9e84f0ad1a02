"""The reference of a custom operator whose entry says ``reference: host``: its C kernel
compiled for this machine and run on each call's inputs, so that ``tvmdev run`` on a
board checks the board's build of the kernel against the host's. On the host board it
compares the kernel with itself: such an operator is then checked for nothing but its
build (README 'Custom operators').

Each call gets a small program under ``reference/<operator>/`` of the build folder: the
op's header with the kernel's prototype, and a ``main.c`` that fills the params struct
with the call's values (as the executor's initializer does), reads the inputs from files,
calls the kernel and writes the output.
"""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..load.board import board_by_name
from ..load.library import Kernel
from ..model.custom import CUSTOM, CustomOp
from ..model.graph import Model, Operator
from ..model.ops import CTYPES, OPS, kernel_params, kernel_prototype
from ..model.reference import Override
from ..model.scratch import scratch_need
from ..plan.kernels import tensor_dtypes
from ..render.custom_op import op_header
from ..render.cvalues import c_float
from ..render.engine import banner, c_call, render
from ..write.files import OutFile, sync
from .backend import Job

COMMAND = "tvmdev run (host reference of a custom operator)"


def _value(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return c_float(v)
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(_value(x) for x in v) + "}"
    return str(int(v))


def _program(model: Model, op: Operator, custom: CustomOp, kernel: Kernel,
             params: dict[str, Any], scratch: int) -> list[OutFile]:
    """The header and main.c of the program that runs ``kernel`` on one call."""
    opdef = OPS[custom.name]
    dtypes = tensor_dtypes(model, op)
    names = [n for _, n in kernel_params(opdef)]
    given = [(a, t) for a, t in zip((*opdef.inputs, *opdef.outputs), (*op.inputs, *op.outputs),
                                    strict=True) if t is not None]
    exprs = {a: f"t_{a}" for a, _ in given} | {"params": "&params", "resource_handle": "NULL"}
    # Absent optional inputs are NULL (every input of a custom op is required today).
    exprs.update({a: "NULL" for a in opdef.inputs if a not in exprs})
    arrays = [{"name": f"t_{a}", "ctype": CTYPES[dtypes[a]],
               "count": max(1, int(np.prod(model.tensors[t].shape)))} for a, t in given]
    if scratch:
        params = {**params, "scratch_bytes": scratch}
    header = op_header(custom, [kernel_prototype(opdef, kernel.name, dtypes, custom.struct)],
                       COMMAND)
    main = render("harness/custom/reference.c.j2", banner=banner("c", COMMAND, "owned"),
                  name=op.name, op=custom.name, kernel=kernel.name, h=custom.header,
                  struct=custom.struct, arrays=arrays, inputs=arrays[:-1],
                  output=arrays[-1]["name"], argc=len(arrays) + 1, scratch=scratch,
                  fields=[(k, _value(v)) for k, v in params.items()],
                  call=c_call("", kernel.name, [exprs[n] for n in (kernel.args or names)],
                              4).strip().rstrip(";"))
    return [header, OutFile("main.c", main, "owned")]


def _build(job: Job, op: Operator, custom: CustomOp, kernel: Kernel) -> Path:
    """Compile the program of one call with the host board's compiler."""
    folder = job.build_dir / "reference" / op.cname
    struct, params = job.model.operator_params(op)
    scratch = scratch_need(kernel.scratch, params, job.board.tuning)
    sync(folder, _program(job.model, op, custom, kernel, params, scratch))
    tc = board_by_name("host").toolchain
    exe = folder / "reference.out"
    cmd = [tc.cc, *tc.cflags, f"-I{folder}", f"-I{kernel.include_dir}",
           f"-I{job.build_dir / 'model'}", str(folder / "main.c"),
           *(str(s) for s in kernel.sources), "-o", str(exe), *tc.ldflags]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TvmdevError(f"custom op {custom.name}: building its kernel for the host as "
                          f"the reference failed ({tc.cc} exited {proc.returncode})",
                          custom.where_of("reference"), log=proc.stderr,
                          hint=f"the program is in {folder}")
    return exe


def _run(exe: Path, op: Operator, model: Model, args: list[np.ndarray | None]
         ) -> np.ndarray:
    files = []
    for i, a in enumerate(args):
        if a is not None:
            path = exe.parent / f"in{i}.bin"
            path.write_bytes(np.ascontiguousarray(a).tobytes())
            files.append(str(path))
    out = model.tensors[op.outputs[0]]
    path = exe.parent / "out.bin"
    proc = subprocess.run([str(exe), *files, str(path)], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise TvmdevError(f"operator '{op.name}' ({op.op}): its kernel on the host, the "
                          f"reference, failed: {proc.stderr.strip() or proc.returncode}",
                          op.where)
    return np.fromfile(path, dtype=np.dtype(out.dtype)).reshape(out.shape)


def host_references(job: Job) -> dict[int, Override]:
    """The reference of every custom operator whose entry says ``reference: host``, each
    program built now."""
    out: dict[int, Override] = {}
    for op in job.model.operators:
        custom = CUSTOM.get(op.op)
        if custom is None or custom.reference is not None:
            continue
        kernel = job.compiled.chains[op.index][0]
        out[op.index] = partial(_run, _build(job, op, custom, kernel), op, job.model)
    return out
