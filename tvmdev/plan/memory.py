"""Planners: the device activation schedule and the static memory plan.

Both read a :class:`~tvmdev.model.Model` and return plain data; nothing here renders or
writes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..model.graph import Model
from .inplace import Candidates, portable_inplace, portable_keeping
from .lifetimes import ALIGN as ALIGN
from .lifetimes import Segment, aligned, greedy, lifetimes

SCHEDULES = ("eager", "lazy")


# --- memory plan ------------------------------------------------------------------------

@dataclass(frozen=True)
class Buffer:
    """A region of the arena shared by tensors computed in place into one another, or the
    scratch of one operator's kernel (no tensors; live during that operator only)."""

    tensors: tuple[str, ...]
    size: int  # bytes, aligned
    start: int  # index of the operator that first writes it
    end: int  # index of the operator that last reads it
    offset: int
    scratch_of: int | None = None  # the operator whose scratch this is
    persistent: bool = False  # a state tensor: live across runs, in the state region
    # Continues the buffer before it at the same offset from its first operator, which
    # writes fewer bytes over that one's (lifetimes.Segment): not counted twice there.
    continues: bool = False


@dataclass(frozen=True)
class StateSlot:
    """A state tensor's place in the workspace's state region and the byte a reset fills
    it with (:meth:`tvmdev.model.graph.Model.state_fill`)."""

    name: str
    offset: int
    size: int  # bytes
    fill: int


@dataclass(frozen=True)
class MemoryPlan:
    offsets: dict[str, int]  # intermediate tensor -> arena offset
    buffers: tuple[Buffer, ...]
    arena_size: int
    lower_bound: int  # the most bytes live at any one time
    alignment: int
    inplace: tuple[tuple[str, str], ...]  # (output, input) pairs computed in place
    scratch: dict[int, tuple[int, int]] = field(default_factory=dict)  # op -> offset, bytes
    # The state tensors, in a region of their own at the end of the arena that no other
    # buffer meets: kept from one run to the next, set by the generated reset.
    states: tuple[StateSlot, ...] = ()

    @property
    def state_region(self) -> tuple[int, int]:
        """(offset, bytes) of the state region; (arena_size, 0) without state."""
        if not self.states:
            return self.arena_size, 0
        start = self.states[0].offset
        return start, self.arena_size - start

    @property
    def tensor_arena_size(self) -> int:
        """The arena the tensors alone need: what scratch that fits no gap (and the
        state region) adds to."""
        return max((b.offset + b.size for b in self.buffers
                    if b.scratch_of is None and not b.persistent), default=0)

    @property
    def ratio(self) -> float:
        """Arena size over its lower bound (1.0 is optimal)."""
        return self.arena_size / self.lower_bound if self.lower_bound else 1.0


def plan_memory(model: Model, inplace: bool | Candidates = True,
                scratch: Mapping[int, int] | None = None,
                exclude: frozenset[str] = frozenset(), no_inplace: frozenset[int] = frozenset(),
                io: bool = False, keeps: Mapping[int, int] | None = None) -> MemoryPlan:
    """Give every intermediate tensor an arena offset, and every operator in ``scratch``
    (operator index -> bytes) its kernel's scratch.

    Tensors whose lifetimes don't overlap share bytes; an operator whose input dies there
    writes its output over it (in place) where ``inplace`` allows it (operator index -> its
    candidate inputs, :mod:`.inplace`; True: those of the portable kernels, False: none),
    and a view (reshape, flatten) of such an input is that input's buffer, with no copy
    and no call (:mod:`.lifetimes`: an output with fewer bytes frees the rest). Placement
    is greedy by size: the largest buffer first, each at the lowest offset free for its
    whole lifetime.
    Scratch is placed afterwards, so it never moves a tensor: each operator's at the lowest
    offset free of the buffers live during that operator; the arena grows only by the
    scratch that fits in no gap. The model's state tensors come last, each aligned, in a
    region no other buffer meets (they live across runs). ``exclude``: intermediates that
    never exist in CPU memory (they live in a device's); ``no_inplace``: operators that do
    not compute in place (they run from a device's memory).

    With ``io``, the model's inputs and outputs are buffers of the arena too (TVM USMP's
    ``use_workspace_io``): an input from the start of the run to its last reader (a float
    input that QUANTIZE reads is free after it), an output from its writer to the end.

    ``keeps``: operators whose kernels keep what they still read of an input they write
    over (:func:`.inplace.keeping`; with ``inplace`` True, the portable kernels'), with
    their scratch then: in place wherever the output is no larger, with that scratch.
    """
    if isinstance(inplace, bool):
        keeps = portable_keeping(model) if inplace and keeps is None else keeps
        inplace = portable_inplace(model) if inplace else {}
    life = lifetimes(model, inplace, exclude, no_inplace, io, frozenset(keeps or {}))
    scratch = _with_kept(model, life.pairs, scratch or {}, keeps or {})
    chains = life.chains
    size = {r: c[0].size for r, c in chains.items()}
    start = {r: c[0].start for r, c in chains.items()}
    end = {r: c[-1].end for r, c in chains.items()}
    # Two placement orders; the smaller arena wins: largest first (ties: earliest), and
    # longest-lived first among equal sizes, which packs long skip connections better.
    candidates = [greedy(chains, lambda r: (-size[r], start[r], r)),
                  greedy(chains, lambda r: (-size[r], start[r] - end[r], r))]
    by_root = min(candidates, key=lambda o: max((o[r] + size[r] for r in chains), default=0))
    buffers = tuple(Buffer(tuple(s.tensors), s.size, s.start, s.end, by_root[r],
                           continues=s.continues) for r, c in chains.items() for s in c)
    offsets = {t: by_root[r] for t, r in life.owner.items()}
    scratch_buffers = _place_scratch(buffers, scratch or {})
    buffers += scratch_buffers
    arena = max((b.offset + b.size for b in buffers), default=0)
    placed = {b.scratch_of: (b.offset, (scratch or {})[b.scratch_of]) for b in scratch_buffers
              if b.scratch_of is not None}
    states = _state_slots(model, aligned(arena))
    if states:
        last = max(len(model.operators) - 1, 0)
        buffers += tuple(Buffer((s.name,), aligned(s.size), 0, last, s.offset, persistent=True)
                         for s in states)
        offsets.update({s.name: s.offset for s in states})
        arena = states[-1].offset + aligned(states[-1].size)
    return MemoryPlan(offsets, buffers, arena, lower_bound(buffers), ALIGN, tuple(life.pairs),
                      dict(sorted(placed.items())), states)


def _with_kept(model: Model, pairs: Sequence[tuple[str, str]], scratch: Mapping[int, int],
               keeps: Mapping[int, int]) -> dict[int, int]:
    """``scratch``, with the scratch of each operator of ``keeps`` that went in place."""
    writer = {op.outputs[0]: op.index for op in model.operators}
    kept = {writer[o] for o, _ in pairs} & {i for i, n in keeps.items() if n}
    return {**scratch, **{i: keeps[i] for i in kept}}


def _state_slots(model: Model, base: int) -> tuple[StateSlot, ...]:
    """The state tensors one after another from ``base``, each aligned."""
    out = []
    for name in model.states:
        size = model.tensors[name].nbytes
        out.append(StateSlot(name, base, size, model.state_fill(name)))
        base += aligned(size)
    return tuple(out)


def _place_scratch(tensors: Sequence[Buffer], scratch: Mapping[int, int]
                   ) -> tuple[Buffer, ...]:
    """Each operator's scratch at the lowest offset free of the tensor buffers live during
    that operator (one operator's scratch never meets another's). One sweep over the
    operators, with the buffers live at each: no scan of every buffer per operator."""
    by_start = sorted(tensors, key=lambda b: b.start)
    live: dict[int, Buffer] = {}
    ends: list[tuple[int, int]] = []  # (end, id) of the live buffers, a heap
    nxt = 0
    out = []
    for index, size in sorted(scratch.items()):
        while nxt < len(by_start) and by_start[nxt].start <= index:
            b = by_start[nxt]
            live[id(b)] = b
            heapq.heappush(ends, (b.end, id(b)))
            nxt += 1
        while ends and ends[0][0] < index:
            live.pop(heapq.heappop(ends)[1], None)
        if size <= 0:
            continue
        size = aligned(size)
        offset = 0
        for lo, hi in sorted((b.offset, b.offset + b.size) for b in live.values()):
            if lo - offset >= size:
                break
            offset = max(offset, hi)
        out.append(Buffer((), size, index, index, offset, index))
    return tuple(out)


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """The most bytes live at any one operator."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        events.append((b.start + b.continues, b.size))
        events.append((b.end + 1, -b.size))
    events.sort(key=lambda e: (e[0], e[1]))
    live = best = 0
    for _, delta in events:
        live += delta
        best = max(best, live)
    return best


def _greedy(roots: list[str], sizes: dict[str, int], start: dict[str, int],
            end: dict[str, int], key: Callable[[str], tuple[int, int, str]]) -> dict[str, int]:
    """Place buffers of one size each (a device's pool: :mod:`.device_memory`) in ``key``
    order, each at the lowest offset free for its lifetime."""
    return greedy({r: [Segment([], start[r], end[r], sizes[r])] for r in roots}, key)
