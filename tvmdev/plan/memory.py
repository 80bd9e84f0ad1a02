"""Planners: the device activation schedule and the static memory plan.

Both read a :class:`~tvmdev.model.Model` and return plain data; nothing here renders or
writes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..model.graph import Model
from .inplace import Candidates, fits, portable_inplace

ALIGN = 16
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


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def plan_memory(model: Model, inplace: bool | Candidates = True,
                scratch: Mapping[int, int] | None = None,
                exclude: frozenset[str] = frozenset(), no_inplace: frozenset[int] = frozenset(),
                io: bool = False) -> MemoryPlan:
    """Give every intermediate tensor an arena offset, and every operator in ``scratch``
    (operator index -> bytes) its kernel's scratch.

    Tensors whose lifetimes don't overlap share bytes; an operator whose input dies there
    writes its output over it (in place) where ``inplace`` allows it (operator index -> its
    candidate inputs, :mod:`.inplace`; True: those of the portable kernels, False: none),
    and a view (reshape, flatten) of such an input is that input's buffer, with no copy
    and no call. Placement is greedy by
    size: the largest buffer first, each at the lowest offset free for its whole lifetime.
    Scratch is placed afterwards, so it never moves a tensor: each operator's at the lowest
    offset free of the buffers live during that operator; the arena grows only by the
    scratch that fits in no gap. The model's state tensors come last, each aligned, in a
    region no other buffer meets (they live across runs). ``exclude``: intermediates that
    never exist in CPU memory (they live in a device's); ``no_inplace``: operators that do
    not compute in place (they run from a device's memory).

    With ``io``, the model's inputs and outputs are buffers of the arena too (TVM USMP's
    ``use_workspace_io``): an input from the start of the run to its last reader (a float
    input that QUANTIZE reads is free after it), an output from its writer to the end.
    """
    tensors = model.tensors
    if isinstance(inplace, bool):
        inplace = portable_inplace(model) if inplace else {}
    owner, members, start, end, pairs = _buffer_lifetimes(model, inplace, exclude, no_inplace)
    if io:
        _io_lifetimes(model, owner, members, start, end)
    roots = list(members)
    sizes = {r: _aligned(max(tensors[t].nbytes for t in members[r])) for r in roots}
    # Two placement orders; the smaller arena wins: largest first (ties: earliest), and
    # longest-lived first among equal sizes, which packs long skip connections better.
    candidates = [
        _greedy(roots, sizes, start, end, lambda r: (-sizes[r], start[r], r)),
        _greedy(roots, sizes, start, end, lambda r: (-sizes[r], start[r] - end[r], r)),
    ]
    offsets_by_root = min(candidates, key=lambda o: max(
        (o[r] + sizes[r] for r in roots), default=0))
    buffers = tuple(Buffer(tuple(members[r]), sizes[r], start[r], end[r], offsets_by_root[r])
                    for r in roots)
    offsets = {t: offsets_by_root[owner[t]] for t in owner}
    scratch_buffers = _place_scratch(buffers, scratch or {})
    buffers += scratch_buffers
    arena = max((b.offset + b.size for b in buffers), default=0)
    placed = {b.scratch_of: (b.offset, (scratch or {})[b.scratch_of]) for b in scratch_buffers
              if b.scratch_of is not None}
    states = _state_slots(model, _aligned(arena))
    if states:
        last = max(len(model.operators) - 1, 0)
        buffers += tuple(Buffer((s.name,), _aligned(s.size), 0, last, s.offset, persistent=True)
                         for s in states)
        offsets.update({s.name: s.offset for s in states})
        arena = states[-1].offset + _aligned(states[-1].size)
    return MemoryPlan(offsets, buffers, arena, lower_bound(buffers), ALIGN, tuple(pairs),
                      dict(sorted(placed.items())), states)


def _state_slots(model: Model, base: int) -> tuple[StateSlot, ...]:
    """The state tensors one after another from ``base``, each aligned."""
    out = []
    for name in model.states:
        size = model.tensors[name].nbytes
        out.append(StateSlot(name, base, size, model.state_fill(name)))
        base += _aligned(size)
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
        size = _aligned(size)
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
        events.append((b.start, b.size))
        events.append((b.end + 1, -b.size))
    events.sort(key=lambda e: (e[0], e[1]))
    live = best = 0
    for _, delta in events:
        live += delta
        best = max(best, live)
    return best


def _greedy(roots: list[str], sizes: dict[str, int], start: dict[str, int],
            end: dict[str, int], key: Callable[[str], tuple[int, int, str]]) -> dict[str, int]:
    """Place buffers in ``key`` order, each at the lowest offset free for its lifetime."""
    order = sorted(roots, key=key)
    live_at: dict[int, list[str]] = {}
    offsets: dict[str, int] = {}
    for r in order:
        s, e, size = start[r], end[r], sizes[r]
        seen: set[str] = set()
        busy: list[tuple[int, int]] = []
        for t in range(s, e + 1):
            for other in live_at.get(t, ()):
                if other not in seen:
                    seen.add(other)
                    busy.append((offsets[other], offsets[other] + sizes[other]))
        busy.sort()
        offset = 0
        for lo, hi in busy:
            if lo - offset >= size:
                break
            offset = max(offset, hi)
        offsets[r] = offset
        for t in range(s, e + 1):
            live_at.setdefault(t, []).append(r)
    return offsets


def _io_lifetimes(model: Model, owner: dict[str, str], members: dict[str, list[str]],
                  start: dict[str, int], end: dict[str, int]) -> None:
    """Add the model's inputs and outputs to the buffers: each its own (never in place)."""
    last = max(len(model.operators) - 1, 0)
    for name in (*model.inputs, *model.outputs):
        if name in owner:
            continue
        readers = [op.index for op in model.operators if name in op.inputs]
        writers = [op.index for op in model.operators if name in op.outputs]
        owner[name], members[name] = name, [name]
        start[name] = min(writers) if name in model.outputs and writers else 0
        end[name] = last if name in model.outputs else max(readers, default=0)


_Lifetimes = tuple[dict[str, str], dict[str, list[str]], dict[str, int], dict[str, int],
                   list[tuple[str, str]]]


def _buffer_lifetimes(model: Model, inplace: Candidates, exclude: frozenset[str] = frozenset(),
                      no_inplace: frozenset[int] = frozenset()) -> _Lifetimes:
    """Which buffer each intermediate tensor lives in (an operator whose candidate input
    dies there writes in place), and each buffer's first writer and last reader:
    (owner, members, start, end, in-place pairs)."""
    tensors = model.tensors
    last_use: dict[str, int] = {}
    for op in model.operators:
        for t in op.inputs:
            if t is not None:
                last_use[t] = op.index
    # Union-find of tensors sharing a buffer.
    owner: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    pairs: list[tuple[str, str]] = []
    for op in model.operators:
        out = op.outputs[0]
        if tensors[out].role != "intermediate" or out in exclude:
            # Writes a model output: no buffer starts here, but its inputs live until now.
            for t in op.inputs:
                if t is not None and t in owner:
                    end[owner[t]] = max(end[owner[t]], op.index)
            continue
        source = None
        if op.index not in no_inplace:
            for idx in inplace.get(op.index, ()):
                t = op.inputs[idx] if idx < len(op.inputs) else None
                if (t is not None and tensors[t].role == "intermediate" and t in owner
                        and last_use.get(t) == op.index and op.inputs.count(t) == 1
                        and fits(tensors[t], tensors[out])):
                    source = t
                    break
        if source is None:
            owner[out] = out
            members[out] = [out]
            start[out] = op.index
            end[out] = op.index
        else:
            owner[out] = owner[source]
            members[owner[source]].append(out)
            pairs.append((out, source))
        for t in op.inputs:
            if t is not None and t in owner:
                end[owner[t]] = max(end[owner[t]], op.index)
    return owner, members, start, end, pairs
