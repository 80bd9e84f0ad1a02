"""Which library serves each operator, decided at generation time.

A board's kernel libraries (``libraries:``, such as cmsis_nn) come after the user's and
the device kinds' kernels and before the portable ones. An operator that no user or
device kernel takes goes to the board library's kernel for its op and dtypes unless the
library declines it (:mod:`.cmsis_nn`, TFLM's conditions); the decision is final (the
chain is that one kernel), so only the kernels used are compiled. Each operator a board
library serves gets the scratch the library's own buffer-size functions ask for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..load.kernel_tree import ActiveLibrary
from ..load.library import Kernel
from ..model.graph import Model
from . import cmsis_nn
from .tree_build import buffer_sizes, reached_sources


@dataclass(frozen=True)
class Placement:
    """The library an operator's first kernel comes from, and why not a board's."""

    library: str
    declined: str | None = None  # why the board library did not take it


@dataclass(frozen=True)
class TreeSources:
    """What a build compiles of a board library's tree."""

    library: str
    tag: str
    root: Path
    sources: tuple[Path, ...]
    include: tuple[Path, ...]


@dataclass(frozen=True)
class Placed:
    chains: dict[int, tuple[Kernel, ...]]
    placements: dict[int, Placement]
    scratch: dict[int, int] = field(default_factory=dict)  # op -> bytes its library asks
    trees: tuple[TreeSources, ...] = ()
    # op -> params fields a board library's kernel takes precomputed (CArray values)
    params: dict[int, dict[str, Any]] = field(default_factory=dict)


def _library_of(k: Kernel) -> str:
    return "portable" if k.level == "portable" else k.library


def place(model: Model, boards: tuple[ActiveLibrary, ...],
          chains: dict[int, tuple[Kernel, ...]], dtypes: dict[int, dict[str, str]]) -> Placed:
    """Put each operator that only portable kernels serve on a board library's kernel
    where one serves it; ``dtypes``: each operator's argument dtypes."""
    out = dict(chains)
    placements = {i: Placement(_library_of(c[0])) for i, c in chains.items()}
    scratch: dict[int, int] = {}
    extra: dict[int, dict[str, Any]] = {}
    trees = []
    params = {op.index: model.call_params(op) for op in model.operators} if boards else {}
    for active in boards:
        chosen: list[tuple[int, Kernel]] = []
        for op in model.operators:
            if op.device or chains[op.index][0].level != "portable":
                continue
            kernel = next((k for k in active.lib.kernels.kernels
                           if k.op == op.op and k.matches(dtypes[op.index])), None)
            if kernel is None:
                continue
            why = cmsis_nn.decline(model, op, params[op.index], active.arch)
            if why is not None:
                placements[op.index] = Placement("portable", f"{active.lib.name}: {why}")
                continue
            out[op.index] = (kernel,)
            placements[op.index] = Placement(active.lib.name)
            chosen.append((op.index, kernel))
        if not chosen:
            continue
        sized = [(i, k) for i, k in chosen if k.buffer]
        sizes = buffer_sizes(active.lib, active.root, [
            cmsis_nn.request(k.buffer or "", active.arch, params[i]) for i, k in sized])
        for (i, _), n in zip(sized, sizes, strict=True):
            ready = cmsis_nn.precomputed(model, model.operators[i], params[i]) if n else {}
            if ready:  # the buffer would only hold these: no scratch
                extra[i] = ready
            elif n:
                scratch[i] = n
        calls = sorted({c for _, k in chosen for c in k.calls})
        trees.append(TreeSources(active.lib.name, active.lib.pin.tag, active.root,
                                 tuple(reached_sources(active.lib, active.root, calls)),
                                 tuple(active.root / i for i in active.lib.include)))
    return Placed(out, placements, scratch, tuple(trees), extra)


def kernels_line(model: Model, placements: dict[int, Placement]) -> str:
    """One line: how many operators each library serves (by op), and what a board library
    declined and why."""
    by_lib: dict[str, dict[str, int]] = {}
    for op in model.operators:
        lib = placements[op.index].library if op.index in placements else "portable"
        ops = by_lib.setdefault(lib, {})
        ops[op.op] = ops.get(op.op, 0) + 1
    parts = [f"{lib} {sum(ops.values())} (" + ", ".join(
        f"{o} {n}" if n > 1 else o for o, n in ops.items()) + ")" for lib, ops in by_lib.items()]
    declined = [f"{op.name} ({placements[op.index].declined})" for op in model.operators
                if op.index in placements and placements[op.index].declined]
    return ("kernels: " + ", ".join(parts)
            + ("; declined: " + "; ".join(declined) if declined else ""))
