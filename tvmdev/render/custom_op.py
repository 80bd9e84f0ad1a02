"""The header of each custom operator a compiled model calls, ``tvmgen_op_<op>.h``: its
params struct, from the declaration in the ``--kernels`` file (the same declaration the
pipeline computes the values from, so a field cannot be missing on one side), and the
prototypes of its kernels as the executor calls them. The user's kernel source includes
it; the compiler then checks the kernel against the call."""

from __future__ import annotations

from pathlib import Path

from ..model.custom import CUSTOM, CustomOp
from ..model.ops import OPS, kernel_prototype
from ..plan.kernels import tensor_dtypes
from ..plan.pipeline import Compiled
from ..write.files import OutFile
from .engine import banner, render


def _field(ctype: str, name: str) -> str:
    return f"{ctype}{'' if ctype.endswith('*') else ' '}{name}"


def op_header(custom: CustomOp, prototypes: list[str], command: str) -> OutFile:
    """``tvmgen_op_<op>.h`` declaring ``prototypes`` (``command``: what its banner
    records)."""
    guard = custom.header.upper().replace(".", "_") + "_"
    return OutFile(custom.header, render(
        "model/tvmgen_op.h.j2", banner=banner("c", command, "owned"), op=custom.name,
        sources=custom.sources, file=Path(custom.where.file).name, struct=custom.struct,
        guard=guard, scratch_note=(", then the scratch the planner\n * gives the call in "
                                   "the workspace" if custom.scratch else ""),
        fields=[_field(t, n) for t, n in custom.fields()], prototypes=prototypes), "owned")


def custom_op_files(compiled: Compiled, command: str) -> list[OutFile]:
    """One header per custom op the model uses (``command``: what its banner records)."""
    model = compiled.model
    files = []
    for name in dict.fromkeys(op.op for op in model.operators if op.op in CUSTOM):
        custom = CUSTOM[name]
        prototypes: dict[str, str] = {}
        for op in model.operators:
            if op.op != name:
                continue
            dtypes = tensor_dtypes(model, op)
            for k in compiled.chains[op.index]:
                if k.header == custom.header:
                    prototypes.setdefault(k.name, kernel_prototype(OPS[name], k.name, dtypes,
                                                                   custom.struct))
        files.append(op_header(custom, list(prototypes.values()), command))
    return files
