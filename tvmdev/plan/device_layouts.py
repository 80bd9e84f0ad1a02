"""The constants a device kind asks for in its own layout (:mod:`..load.device_layouts`),
laid out at generation time: the bytes the executor loads into the device's memory.

Only a constant that operators run from a device's memory read, every one of them of a
kind with the same layout for it, is laid out: its flash array is stored in that layout
and nothing on the CPU reads it. Anything else is refused in one line at the layout's
place, so the executor never holds a constant in two layouts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import TvmdevError
from ..load.device_layouts import Layout
from ..model.graph import Model
from ..model.ops import OPS


@dataclass(frozen=True)
class LaidOut:
    """A constant in its device layout."""

    data: np.ndarray
    layout: Layout


def apply_layout(data: np.ndarray, layout: Layout, name: str) -> np.ndarray:
    """``data`` (constant ``name``) after ``layout``'s steps; a step that does not fit its
    rank is refused at the layout's line."""
    out = data
    for step in layout.steps:
        if step.kind == "permute":
            if sorted(step.axes) != list(range(out.ndim)):
                raise TvmdevError(f"layouts: {layout.op} {layout.arg}: permute "
                                  f"{list(step.axes)} is not an order of the {out.ndim} axes "
                                  f"of constant '{name}' {list(out.shape)}", layout.where,
                                  hint=f"give each of 0..{out.ndim - 1} once")
            out = np.ascontiguousarray(np.transpose(out, step.axes))
        else:
            axis, multiple = step.axes
            if axis >= out.ndim:
                raise TvmdevError(f"layouts: {layout.op} {layout.arg}: pad axis {axis} of "
                                  f"constant '{name}' {list(out.shape)}, which has "
                                  f"{out.ndim} axes", layout.where,
                                  hint=f"an axis of 0..{out.ndim - 1}, after the permutes")
            extra = -out.shape[axis] % multiple
            widths = [(0, extra if a == axis else 0) for a in range(out.ndim)]
            out = np.pad(out, widths) if extra else out
    return out


def lay_out(model: Model, mem_ops: Mapping[int, str], layouts: Sequence[Layout]
            ) -> dict[str, LaidOut]:
    """Constant name -> its laid-out data, for every layout that applies to an operator
    run from a device's memory (``mem_ops``: operator -> device instance)."""
    wanted: dict[str, tuple[Layout, int]] = {}
    for i, dev in sorted(mem_ops.items()):
        op = model.operators[i]
        kind = model.device(dev).kind
        for layout in layouts:
            if layout.kind != kind or layout.op != op.op:
                continue
            pos = OPS[op.op].inputs.index(layout.arg)
            t = op.inputs[pos] if pos < len(op.inputs) else None
            if t is None:
                continue
            if model.tensors[t].role != "constant" or t in model.quantized:
                raise TvmdevError(f"layouts: {layout.op} {layout.arg} of operator '{op.name}' "
                                  f"is not a constant of the model ('{t}'): only constants "
                                  "are laid out at generation time", layout.where,
                                  hint="remove the entry, or lay the tensor out in the kernel")
            seen = wanted.setdefault(t, (layout, i))
            if seen[0].steps != layout.steps:
                raise TvmdevError(f"layouts: constant '{t}' is read by operators "
                                  f"'{model.operators[seen[1]].name}' and '{op.name}' in two "
                                  "layouts", layout.where,
                                  hint="give the constant one layout")
    for t, (layout, first) in wanted.items():
        cpu = next((op for op in model.operators
                    if t in op.inputs and op.index not in mem_ops), None)
        if cpu is not None:
            raise TvmdevError(f"layouts: constant '{t}' ({layout.op} {layout.arg} of "
                              f"'{model.operators[first].name}') is also read by '{cpu.name}' "
                              "on the CPU, which needs it as the model gives it", layout.where,
                              hint="place that operator on the device too, or remove the "
                                   "layout")
    return {t: LaidOut(apply_layout(model.constants[t], layout, t), layout)
            for t, (layout, _) in wanted.items()}
