"""Which library serves each operator, decided at generation time.

A board's kernel libraries (``libraries:``, such as cmsis_nn) come after the user's and
the device kinds' kernels and before the portable ones. An operator that no user or
device kernel takes goes to the board library's kernel for its op and dtypes unless the
library's hooks decline it (:mod:`.hooks`: CMSIS-NN's are TFLM's conditions); the
decision is final (the chain is that one kernel), so only the kernels used are compiled.
The board's libraries are tried in its order (tvmdev_cm, then cmsis_nn): what one
declines goes to the next, and an operator keeps a decline's reason (``declined``) only
when no board library took it. Each operator a board library serves gets the scratch
the library's own buffer-size functions (or its hooks, without a tree) ask for.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..load.kernel_tree import ActiveLibrary
from ..load.library import Kernel
from ..model.graph import Model, Operator
from .hooks import LibraryHooks, hooks_of
from .tree_build import buffer_sizes, reached_sources


@dataclass(frozen=True)
class Placement:
    """The library an operator's first kernel comes from, the one its chain goes on to when
    that kernel declines at run time, and the fallbacks taken at generation time."""

    library: str
    declined: str | None = None  # why the board library did not take it
    then: str | None = None  # the library after the first one's kernels
    fallback: str | None = None  # why the operator's device kind does not serve it


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


def _initial(model: Model, index: int, chain: tuple[Kernel, ...], known: frozenset[str]
             ) -> Placement:
    """An operator's placement from its resolved chain: its first kernel's library, what
    follows it, and the fallback taken when its device kind (one of ``known``: those whose
    kernels are known) has no kernel for it."""
    op = model.operators[index]
    libs = list(dict.fromkeys(_library_of(k) for k in chain))
    fallback = None
    if (op.device is not None and model.device(op.device).kind in known
            and not any(k.level == "device" for k in chain)):
        kind = model.device(op.device).kind
        fallback = f"device kind {kind} has no {op.op} kernel for its dtypes"
    return Placement(libs[0], then=libs[1] if len(libs) > 1 else None, fallback=fallback)


def place(model: Model, boards: tuple[ActiveLibrary, ...],
          chains: dict[int, tuple[Kernel, ...]], dtypes: dict[int, dict[str, str]],
          params: dict[int, dict[str, Any]], known: frozenset[str] = frozenset()) -> Placed:
    """Put the portable tail of each operator's chain on a board library's kernel where
    one serves it (after the user's and the device kind's kernels, which it backs when
    they decline); ``dtypes``: each operator's argument dtypes; ``known``: the device
    kinds whose kernel libraries are known (a fallback from one of them is reported);
    ``params``: each operator's params values (what a board library's conditions read)."""
    out = dict(chains)
    placements = {i: _initial(model, i, c, known) for i, c in chains.items()}
    scratch: dict[int, int] = {}
    extra: dict[int, dict[str, Any]] = {}
    trees = []
    for active in boards:
        hooks = library_hooks(active)
        chosen: list[tuple[int, Kernel]] = []
        for op in model.operators:
            chain = out[op.index]
            lead = tuple(k for k in chain if k.level != "portable")
            if len(lead) == len(chain):
                continue
            kernel = board_kernel(active, op, dtypes[op.index])
            if kernel is None:
                continue
            why = (hooks.decline(model, op, params[op.index], active.arch, active.flash)
                   if hooks else None)
            if why is not None:
                placements[op.index] = replace(placements[op.index],
                                               declined=f"{active.lib.name}: {why}")
                continue
            out[op.index] = (*lead, kernel)
            first = _library_of(lead[0]) if lead else active.lib.name
            # an earlier board library's decline is no fallback: the board ranks them
            placements[op.index] = replace(placements[op.index], library=first,
                                           then=active.lib.name if lead else None,
                                           declined=None)
            chosen.append((op.index, kernel))
        if not chosen:
            continue
        if active.root is None:  # a library of tvmdev's own: its hooks size and lay out
            _own(model, active, chosen, params, scratch, extra)
            continue
        sized = [(i, k) for i, k in chosen if k.buffer and hooks]
        sizes = buffer_bytes(active, hooks, [(k.buffer or "", params[i]) for i, k in sized]
                             ) if hooks else []
        for (i, _), n in zip(sized, sizes, strict=True):
            ready = (hooks.precomputed(model, model.operators[i], params[i], active.flash,
                                       active.arch) if n and hooks else {})
            if ready:  # the buffer would only hold these: no scratch
                extra[i] = ready
            elif n:
                scratch[i] = n
        calls = sorted({c for _, k in chosen for c in k.calls})
        tree = active.lib.pinned()
        trees.append(TreeSources(active.lib.name, tree.pin.tag, active.root,
                                 tuple(reached_sources(active.lib, active.root, calls)),
                                 tuple(active.root / i for i in tree.include)))
    return Placed(out, placements, scratch, tuple(trees), extra)


def library_hooks(active: ActiveLibrary) -> LibraryHooks | None:
    """The hooks a board library's library.yaml names (None: it names none)."""
    return hooks_of(active.lib.hooks, active.lib.name, str(active.lib.folder / "library.yaml"))


def board_kernel(active: ActiveLibrary, op: Operator, dtypes: dict[str, str]
                 ) -> Kernel | None:
    """The board library's kernel for ``op`` with these argument dtypes, if it has one."""
    return next((k for k in active.lib.kernels.kernels
                 if k.op == op.op and k.matches(dtypes)), None)


def buffer_bytes(active: ActiveLibrary, hooks: LibraryHooks,
                 asked: list[tuple[str, dict[str, Any]]]) -> list[int]:
    """The scratch bytes each (buffer, params) asks of a board library: what its hooks
    count for a library without a tree (tvmdev_cm), else its tree's buffer-size probe."""
    if active.root is None:
        return [hooks.scratch_bytes(b, active.arch, p) for b, p in asked]
    return buffer_sizes(active.lib, active.root,
                        [hooks.request(b, active.arch, p) for b, p in asked])


def _own(model: Model, active: ActiveLibrary, chosen: list[tuple[int, Kernel]],
         params: dict[int, dict[str, Any]], scratch: dict[int, int],
         extra: dict[int, dict[str, Any]]) -> None:
    """A library without a tree (tvmdev_cm): each chosen operator's scratch, the bytes
    its hooks compute, and the params fields they lay out (the filter, folded biases)."""
    hooks = library_hooks(active)
    if hooks is None:
        return
    for i, k in chosen:
        op = model.operators[i]
        if k.buffer:
            scratch[i] = hooks.scratch_bytes(k.buffer, active.arch, params[i])
        ready = hooks.precomputed(model, op, params[i], active.flash, active.arch)
        if ready:
            extra[i] = ready


def kernels_line(model: Model, placements: dict[int, Placement]) -> str:
    """One line: how many operators each library serves first (by op) and which library
    serves them when its kernel declines, what a board library declined and why, and
    each fallback taken at generation time."""
    by_lib: dict[str, dict[str, int]] = {}
    for op in model.operators:
        p = placements.get(op.index, Placement("portable"))
        ops = by_lib.setdefault(p.library + (f" then {p.then}" if p.then else ""), {})
        ops[op.op] = ops.get(op.op, 0) + 1
    parts = []
    for lib, ops in by_lib.items():
        first, _, then = lib.partition(" then ")
        parts.append(f"{first} {sum(ops.values())} (" + ", ".join(
            f"{o} {n}" if n > 1 else o for o, n in ops.items()) + ")"
            + (f" then {then}" if then else ""))
    declined = [f"{op.name} ({placements[op.index].declined})" for op in model.operators
                if op.index in placements and placements[op.index].declined]
    fallbacks = [f"{op.name} on {op.device} ({placements[op.index].fallback}: "
                 f"{placements[op.index].library})" for op in model.operators
                 if op.index in placements and placements[op.index].fallback]
    return ("kernels: " + ", ".join(parts)
            + ("; declined: " + "; ".join(declined) if declined else "")
            + ("; fallback: " + "; ".join(fallbacks) if fallbacks else ""))
