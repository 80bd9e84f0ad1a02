"""The buffers of the memory plan and their lifetimes, and their greedy placement.

Tensors computed in place into one another form a chain: one offset in the arena for all
of them. A chain is a list of segments: while its tensors keep their size, one segment;
when an operator writes fewer bytes over its input (QUANTIZE from float to int8), a new,
smaller segment continues at the same offset from that operator on, so the bytes the
input no longer needs are free for other buffers (:class:`Segment`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..model.graph import Model
from .inplace import Candidates, fits

ALIGN = 16


def aligned(n: int) -> int:
    """``n`` bytes rounded up to the arena's alignment."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Segment:
    """Part of a chain: its tensors, from the operator that writes the first to the one
    that last reads any, and their bytes (aligned). ``continues``: it starts at the
    operator that ends the previous segment of its chain, writing over it as it reads."""

    tensors: list[str]
    start: int
    end: int
    size: int
    continues: bool = False


@dataclass
class Lifetimes:
    chains: dict[str, list[Segment]] = field(default_factory=dict)  # by first tensor
    owner: dict[str, str] = field(default_factory=dict)  # tensor -> its chain
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (output, input) in place


def lifetimes(model: Model, inplace: Candidates, exclude: frozenset[str],
              no_inplace: frozenset[int], io: bool, keeps: frozenset[int] = frozenset()
              ) -> Lifetimes:
    """The chains of the tensors in the arena: the intermediates but ``exclude``, and
    with ``io`` the model's inputs (from the start of the run) and outputs (to its end).
    An operator writes over a candidate input (``inplace``) that dies there, unless it is
    in ``no_inplace``; one in ``keeps`` (its kernels keep what they still read) wherever
    its output is no larger (:func:`.inplace.fits`)."""
    tensors = model.tensors
    # A row slice (patch-based inference) is bytes of its parent: using it uses the parent.
    whole = {s: p for s, (p, _) in model.slices.items()}
    last_use: dict[str, int] = {}
    for op in model.operators:
        for t in op.inputs:
            if t is not None:
                last_use[whole.get(t, t)] = op.index
    roles = ("intermediate", "input", "output") if io else ("intermediate",)
    life = Lifetimes()
    seg_of: dict[str, Segment] = {}

    def begin(name: str, index: int) -> None:
        seg_of[name] = Segment([name], index, index, aligned(tensors[name].nbytes))
        life.chains[name], life.owner[name] = [seg_of[name]], name

    for name in model.inputs if io else ():
        begin(name, 0)
    for op in model.operators:
        out = op.outputs[0]
        if out in whole:  # rows of a tensor, which begins at its first rows' writer
            out = whole[out]
            if tensors[out].role in roles and out not in exclude and out not in seg_of:
                begin(out, op.index)
        elif tensors[out].role in roles and out not in exclude and out not in seg_of:
            source = None if op.index in no_inplace else next((
                t for t in (op.inputs[i] if i < len(op.inputs) else None
                            for i in inplace.get(op.index, ()))
                if t is not None and t in seg_of and last_use.get(t) == op.index
                and t not in model.outputs  # a graph output is read after the run
                and op.inputs.count(t) == 1
                and fits(tensors[t], tensors[out], op.index in keeps)), None)
            if source is None:
                begin(out, op.index)
            else:
                _continue(life, seg_of, source, out, op.index, aligned(tensors[out].nbytes))
        for t in (*op.inputs, out):
            t = whole.get(t, t) if t is not None else None
            if t is not None and t in seg_of:
                seg_of[t].end = max(seg_of[t].end, op.index)
    last = max(len(model.operators) - 1, 0)
    for name in model.outputs if io else ():
        if name in seg_of:
            seg_of[name].end = last
    return life


def _continue(life: Lifetimes, seg_of: dict[str, Segment], source: str, out: str,
              index: int, size: int) -> None:
    """``out`` written over ``source`` at operator ``index``: in its segment, or a new,
    smaller one of its chain."""
    root = life.owner[source]
    seg = life.chains[root][-1]
    if size < seg.size:
        seg = Segment([out], index, index, size, continues=True)
        life.chains[root].append(seg)
    else:
        seg.tensors.append(out)
    seg_of[out], life.owner[out] = seg, root
    life.pairs.append((out, source))


def greedy(chains: dict[str, list[Segment]], key: Callable[[str], tuple[int, int, str]]
           ) -> dict[str, int]:
    """Place the chains in ``key`` order, each at the lowest offset where every one of
    its segments is clear of what is placed and live beside it."""
    live_at: dict[int, list[tuple[str, int]]] = {}
    offsets: dict[str, int] = {}
    for r in sorted(chains, key=key):
        busy: set[tuple[int, int, int]] = set()  # (lo, hi) taken while a segment of size
        for seg in chains[r]:
            for t in range(seg.start, seg.end + 1):
                for other, size in live_at.get(t, ()):
                    busy.add((offsets[other], offsets[other] + size, seg.size))
        offsets[r] = _lowest(busy)
        for seg in chains[r]:
            for t in range(seg.start, seg.end + 1):
                live_at.setdefault(t, []).append((r, seg.size))
    return offsets


def _lowest(busy: set[tuple[int, int, int]]) -> int:
    """The lowest offset clear of every taken range: from 0, past whatever it meets."""
    offset = 0
    while True:
        bump = max((hi for lo, hi, size in busy if offset + size > lo and offset < hi),
                   default=None)
        if bump is None:
            return offset
        offset = bump
