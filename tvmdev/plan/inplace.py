"""Which operators may write their output over one of their inputs: kernel data, not op
names.

A kernel says which inputs it may overwrite (``inplace: [A, B]`` in its library,
:mod:`tvmdev.load.library`): it writes output element i only after it has read the
input's elements up to i, in order. An operator tries the kernels of its chain in turn
(a later one runs when an earlier declines), so it may go in place on an input only when
every kernel of its chain allows it. A view (reshape, flatten: the input's elements in the
same order under another shape) aliases its input with no kernel at all: the executor
does not call it then.

The memory planner (:func:`tvmdev.plan.memory.plan_memory`) takes these candidates and
goes in place only where it is safe whatever the kernel: the input dies at that operator,
is read once by it, has as many elements as the output, and elements no smaller than the
output's (:func:`fits`).

A kernel that reads windows of its input (depthwise convolution) cannot promise that
order; it keeps instead, in its scratch, what it still has to read of the input it
writes over (``inplace_keep``: runtime/kernels/portable/inplace_rows.h keeps a ring of
input rows). Where every kernel of the chain keeps, the output may start at the input's
address whenever it is no larger in bytes (a stride of 2 writes fewer elements), and the
operator's scratch, when it does go in place, is what its kernels keep (:func:`keeping`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..load.library import Kernel
from ..model.graph import Model, Tensor
from ..model.ops import OPS
from ..model.scratch import Tuning, scratch_need
from ..model.shapes import numel

# Operator index -> the inputs (by index) its output may be written over, in preference.
Candidates = Mapping[int, tuple[int, ...]]


def inplace_inputs(model: Model, chains: Mapping[int, Sequence[Kernel]]
                   ) -> dict[int, tuple[int, ...]]:
    """The inputs each operator of ``model`` may write its output over, from its kernel
    chain (``chains``: operator index -> the kernels it tries): those every kernel of the
    chain allows, in the first kernel's order; a view's input whatever its kernels. A
    chain where some kernels keep what they read (``inplace_keep``) and others do not
    allows none: the plan could not serve both."""
    out: dict[int, tuple[int, ...]] = {}
    for op in model.operators:
        opdef = OPS.get(op.op)
        if opdef is not None and opdef.view:
            out[op.index] = (0,)
            continue
        chain = chains.get(op.index, ())
        keeps = {k.inplace_keep is not None for k in chain}
        if not chain or len(keeps) > 1:  # all keep what they read, or none does
            continue
        allowed = [i for i in chain[0].inplace if all(i in k.inplace for k in chain[1:])]
        if allowed:
            out[op.index] = tuple(allowed)
    return out


def portable_inplace(model: Model) -> dict[int, tuple[int, ...]]:
    """The candidates of a plain run: each operator on the portable kernels (and a
    device's, where its kind has them) of an empty registry."""
    from .kernels import build_registry, resolve

    return inplace_inputs(model, resolve(model, build_registry([], [])))


def keeping(model: Model, chains: Mapping[int, Sequence[Kernel]], tuning: Tuning,
            scratch: Mapping[int, int],
            params: Mapping[int, tuple[str, dict[str, Any]]] | None = None) -> dict[int, int]:
    """The operators whose every kernel keeps what it still reads of an input it writes
    over (``inplace_keep``), each with the scratch bytes it needs when it does: the most
    of its ``scratch`` (a kernel's own, or the buffer its library sized: ``buffer``) and
    what a kernel's rule keeps (from the scratch's start)."""
    out: dict[int, int] = {}
    for op in model.operators:
        chain = chains.get(op.index, ())
        if not chain or not all(k.inplace_keep for k in chain):
            continue
        values = params[op.index][1] if params is not None else model.operator_params(op)[1]
        base = scratch.get(op.index, 0)
        out[op.index] = max([base] + [
            scratch_need(k.scratch, values, tuning) + scratch_need(k.inplace_keep, values,
                                                                   tuning)
            for k in chain if k.inplace_keep != "buffer"])
    return out


def portable_keeping(model: Model) -> dict[int, int]:
    """:func:`keeping` of a plain run: the portable kernels, the default tuning."""
    from .kernels import build_registry, operator_scratch, resolve

    chains = resolve(model, build_registry([], []))
    return keeping(model, chains, Tuning(), operator_scratch(model, chains, Tuning()))


def fits(source: Tensor, out: Tensor, keeps: bool = False) -> bool:
    """Whether ``out`` may start at ``source``'s address whatever the kernel, given that
    it reads in order: as many elements, none larger than the source's (output element i
    then covers only bytes of source elements up to i, all read before it is written).
    A kernel that ``keeps`` what it still reads needs only that ``out`` is no larger."""
    if keeps:
        return out.nbytes <= source.nbytes
    return (numel(source.shape) == numel(out.shape)
            and out.nbytes <= source.nbytes)


def is_view(model: Model, index: int) -> bool:
    """Whether operator ``index`` is a view (reshape, flatten): aliased, it calls nothing."""
    opdef = OPS.get(model.operators[index].op)
    return opdef is not None and opdef.view
