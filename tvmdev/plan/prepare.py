"""Prepared operators: each operator of a compiled model, prepared once.

TFLM prepares an operator into its ``OpData`` (``ConvPrepare`` fills ``OpDataConv``) before
the first invoke; tvmdev does the same at generation time. An operator's record holds the
kernels it tries, the params struct its kernels take with the values that fill it (a board
library's precomputed fields included) and the scratch the memory plan gives it. Renderers
read these records and compute nothing of their own. The params structs the values fill
are declared in the portable headers; tests/test_params_structs.py checks each op's values
against its struct with pycparser.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..load.library import Kernel
from ..model.graph import Model, Operator
from ..model.ops import scratch_structs
from ..model.s8.call import CArray
from .inplace import is_view
from .memory import MemoryPlan
from .placement import Placed, Placement


@dataclass(frozen=True)
class Prepared:
    """One operator, ready to render: what it calls, with what, and its scratch."""

    index: int
    chain: tuple[Kernel, ...]  # the kernels it tries, in order (one when final)
    placement: Placement  # the library serving it, and the fallbacks taken
    struct: str  # the C params struct its kernels take
    params: Mapping[str, Any]  # the struct's field values (read-only)
    takes_scratch: bool  # whether the struct has scratch fields
    scratch: tuple[int, int]  # (offset in the workspace, bytes); (0, 0) for none
    # A view (reshape, flatten) planned in its input's buffer: that input; the executor
    # calls no kernel for it (the bytes are already where the output is).
    view_of: str | None = None


ParamsCache = dict[Hashable, tuple[str, dict[str, Any]]]


def operator_params(model: Model, cache: ParamsCache | None = None
                    ) -> dict[int, tuple[str, dict[str, Any]]]:
    """Every operator's params struct and values, computed once for the whole pipeline.
    ``cache``: the params of operators seen before, by what they are computed from (the
    op, its attributes and its tensors' shapes, dtypes and quantization): patch-based
    inference's search plans many models whose operators are mostly the same."""
    out = {}
    for op in model.operators:
        key = _signature(model, op) if cache is not None else None
        if key is not None and cache is not None and key in cache:
            out[op.index] = cache[key]
            continue
        out[op.index] = model.operator_params(op)
        if key is not None and cache is not None:
            cache[key] = out[op.index]
    return out


def _signature(model: Model, op: Operator) -> Hashable | None:
    """What ``op``'s params are computed from, or None when it does not hash."""
    ts = [model.tensors[t] if t is not None else None for t in (*op.inputs, op.outputs[0])]
    key = (op.op, op.attrs, tuple(None if t is None else (t.shape, t.dtype, t.quant,
                                                          t.role == "constant") for t in ts))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def prepare(model: Model, params: dict[int, tuple[str, dict[str, Any]]], placed: Placed,
            memory: MemoryPlan, device_scratch: Mapping[int, tuple[int, int]] | None = None
            ) -> tuple[Prepared, ...]:
    """The records of ``model``'s operators, from their ``params`` and ``placed`` chains
    (with a board library's precomputed fields), and the scratch ``memory`` gave them
    (``device_scratch``: an operator run from a device's memory, its address there)."""
    scratch = {**memory.scratch, **(device_scratch or {})}
    with_scratch = scratch_structs()
    aliased = dict(memory.inplace)
    return tuple(
        Prepared(op.index, placed.chains[op.index], placed.placements[op.index],
                 params[op.index][0],
                 MappingProxyType({**params[op.index][1], **placed.params.get(op.index, {})}),
                 params[op.index][0] in with_scratch, scratch.get(op.index, (0, 0)),
                 aliased.get(op.outputs[0]) if is_view(model, op.index) else None)
        for op in model.operators)


def replaced_inputs(model: Model, ops: tuple[Prepared, ...]) -> frozenset[tuple[int, int]]:
    """(operator, input position) pairs whose data an operator's one kernel reads from a
    params array laid out at generation time (:attr:`CArray.replaces`). An operator with
    fallbacks keeps its inputs (the kernel after it reads them), and so does one placed on
    a device (its constants may be copied into the device's memory)."""
    return frozenset((p.index, i) for p in ops if len(p.chain) == 1 and p.view_of is None
                     and model.operators[p.index].device is None
                     for v in p.params.values() if isinstance(v, CArray)
                     for i in v.replaces)
