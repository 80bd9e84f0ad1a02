"""Where to patch: the stages and patch counts that lower the plan's peak the most within
an instruction budget (MCUNetV2's search, over this plan's own lifetimes).

The peak is the most bytes live at one operator (the memory plan's lower bound, the model's
inputs and outputs included where the plan holds them), from the same lifetimes the
memory planner uses, with each operator computing in place where its kernels allow
(:mod:`.inplace`). A stage is tried around the operator where the peak is: every run of
rowwise operators (:func:`.patch.stage_problem`) that holds it (those whose whole input
and output are smallest first), with each of :data:`PATCH_COUNTS` up to the output's
rows. Each try costs its operators' work again on the rows the bands overlap by, plus a
kernel call per operator per band (:func:`stage_cost`, in estimated instructions,
:func:`op_cost`); a try whose extra work would take the whole model over ``budget``
times its unpatched work (with :data:`MARGIN` to spare) is left out. The tries with the
lowest peaks are planned in full, kernel scratch included (``arena``), and the smallest
arena is kept when it is smaller than before; then the search looks again at the new
peak, up to :data:`MAX_STAGES` stages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..model.graph import Model, Operator
from ..model.shapes import numel
from .inplace import Candidates
from .lifetimes import lifetimes
from .patch import Geometry, Stage, bands, needed_rows, patch_model, rowwise, stage_problem

MAX_STAGES = 3
# The (first, last) stages tried around a peak, and how many of the best tries the whole
# pipeline plans (kernels' scratch included) to choose from.
PAIRS = 24
KEEP = 8
# The work model, in instructions of a Cortex-M4 with CMSIS-NN (measured: patched
# person_detect, visual_wake_words and MCUNet VWW against their unpatched runs): a kernel
# call with its set-up, a multiply-accumulate, a requantized output element, an input
# element read (or widened) by a window, an element of an elementwise operator.
CALL_COST = 2000
MAC_COST = 0.6
OUTPUT_COST = 12
READ_COST = 3
ELEMENT_COST = 6
# The model's extra work fell short of the measured by up to 9% (person_detect): the
# budget is kept with that much to spare.
MARGIN = 1.15
# The most operators a stage spans on either side of the peak.
REACH = 12
# The patch counts tried (MCUNetV2's search tries a few, too).
PATCH_COUNTS = (2, 3, 4, 5, 6, 8, 10, 12, 14, 16)


def op_cost(geo: Geometry, op: Operator, rows: int | None = None) -> int:
    """``op``'s work on ``rows`` of its output (default: all), in estimated instructions:
    its multiply-accumulates, a requantization per output element, a read per input
    element a window operator reads (its inputs' rows for those output rows), or a few
    instructions per element of an elementwise operator."""
    out = geo.model.tensors[op.outputs[0]].shape
    w = geo.window(op)
    if w is None:  # (any rank: every operator of the model is counted)
        return ELEMENT_COST * (numel(out) if rows is None else rows * numel(out[2:]))
    rows = out[1] if rows is None else rows
    elems = rows * numel(out[2:])
    read = min(w.height, (rows - 1) * w.stride + w.kernel) * numel(
        geo.model.tensors[op.inputs[0] or ""].shape[2:])
    return int(elems * (w.taps * MAC_COST + OUTPUT_COST) + read * READ_COST)


def stage_cost(geo: Geometry, stage: Stage) -> int:
    """The work of ``stage`` run in its bands, kernel calls included."""
    model = geo.model
    ops = model.operators[stage.first:stage.last + 1]
    total = 0
    height = model.tensors[ops[-1].outputs[0]].shape[1]
    for rows in bands(height, stage.patches):
        need = needed_rows(geo, stage, rows)
        for op in ops:
            r = need[op.outputs[0]]
            total += op_cost(geo, op, r[1] - r[0]) + CALL_COST
    return total


def profile(model: Model, inplace: Candidates, io: bool) -> list[int]:
    """The bytes live at each operator of ``model``."""
    life = lifetimes(model, inplace, frozenset(), frozenset(), io)
    delta = [0] * (len(model.operators) + 1)
    for chain in life.chains.values():
        for seg in chain:
            delta[seg.start + seg.continues] += seg.size
            delta[seg.end + 1] -= seg.size
    live, out = 0, []
    for d in delta[:-1]:
        live += d
        out.append(live)
    return out


def _key(live: list[int]) -> tuple[int, int]:
    """How good a profile is: its peak, then its highest other than the peak."""
    top = max(live, default=0)
    return top, max((v for v in live if v < top), default=0)


def _pairs(geo: Geometry, at: int, taken: list[Stage], extra: Callable[[Stage], int],
           allowed: float) -> list[tuple[int, int]]:
    """The (first, last) stages holding operator ``at`` that overlap none ``taken`` and
    whose ``extra`` work in two patches is ``allowed``, those whose input and output
    (which live whole through the stage) are smallest first."""
    ops = geo.model.operators
    if not rowwise(geo, ops[at]):
        return []
    lo = at
    while lo > max(0, at - REACH) and rowwise(geo, ops[lo - 1]):
        lo -= 1
    hi = at
    while hi < min(len(ops) - 1, at + REACH) and rowwise(geo, ops[hi + 1]):
        hi += 1
    busy = {i for s in taken for i in range(s.first, s.last + 1)}
    tensors = geo.model.tensors

    def ends(ab: tuple[int, int]) -> int:
        return (tensors[ops[ab[0]].inputs[0] or ""].nbytes
                + tensors[ops[ab[1]].outputs[0]].nbytes)

    pairs = [(a, b) for a in range(lo, at + 1) for b in range(at, hi + 1)
             if not busy & set(range(a, b + 1)) and stage_problem(geo, a, b) is None
             and extra(Stage(a, b, 2)) <= allowed]
    return sorted(pairs, key=ends)[:PAIRS]


def choose(model: Model, inplace: Mapping[int, tuple[int, ...]], io: bool, budget: float,
           arena: Callable[[tuple[Stage, ...]], int]) -> tuple[Stage, ...]:
    """The stages to patch in ``model`` (in order), or none when patching lowers no peak
    within ``budget`` (instructions over the unpatched plan's). ``arena``: the workspace
    the whole pipeline plans for given stages, kernels' scratch included, which decides
    between the tries the lifetimes rank best."""
    geo = Geometry(model)
    base = sum(op_cost(geo, op) + CALL_COST for op in model.operators)
    allowed = (budget - 1.0) * base / MARGIN
    stages: tuple[Stage, ...] = ()
    spent = 0
    best = arena(())
    patched, origin = model, tuple(range(len(model.operators)))

    def added(stage: Stage) -> int:
        plain = sum(op_cost(geo, op) + CALL_COST
                    for op in model.operators[stage.first:stage.last + 1])
        return stage_cost(geo, stage) - plain

    def cands(where: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
        return {i: inplace[o] for i, o in enumerate(where) if o in inplace}

    for _ in range(MAX_STAGES):
        live = profile(patched, cands(origin), io)
        now = _key(live)
        tries: dict[tuple[int, int], tuple[tuple[int, int], int, Stage]] = {}
        for a, b in _pairs(geo, origin[live.index(now[0])], list(stages), added,
                           allowed - spent):
            height = model.tensors[model.operators[b].outputs[0]].shape[1]
            for patches in (p for p in PATCH_COUNTS if p <= height):
                stage = Stage(a, b, patches)
                extra = added(stage)
                if spent + extra > allowed:
                    continue
                tried = tuple(sorted([*stages, stage], key=lambda s: s.first))
                p_model, where = patch_model(model, tried, geo)
                got = (_key(profile(p_model, cands(where), io)), extra, stage)
                if got[0] < now and ((a, b) not in tries or got[:2] < tries[a, b][:2]):
                    tries[a, b] = got
        found: tuple[int, int, Stage] | None = None
        for _, extra, stage in sorted(tries.values(), key=lambda t: t[:2])[:KEEP]:
            tried = tuple(sorted([*stages, stage], key=lambda s: s.first))
            real = arena(tried)
            if real < best and (found is None or (real, extra) < found[:2]):
                found = (real, extra, stage)
        if found is None:
            break
        best, stages = found[0], tuple(sorted([*stages, found[2]], key=lambda s: s.first))
        spent += found[1]
        patched, origin = patch_model(model, stages, geo)
    return stages
