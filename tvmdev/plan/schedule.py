"""The device activation schedule: when each device is activated and deactivated."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.graph import Model

SCHEDULES = ("eager", "lazy")


@dataclass(frozen=True)
class Step:
    """One step of the run function: ``activate``/``deactivate`` a device, or run ``op``;
    for a device with memory also ``open``, ``load`` (its constants, when not loaded),
    ``copy_to``/``copy_from`` ``tensor``, ``wait`` and ``close``
    (:mod:`tvmdev.plan.device_memory`)."""

    action: str
    device: str | None = None
    op: int | None = None  # index into model.operators
    tensor: str | None = None  # what a copy copies


def schedule(model: Model, kind: str = "eager") -> tuple[Step, ...]:
    """The run function's steps.

    ``eager`` activates every device an operator uses before the first operator and
    deactivates them (in reverse) after the last, as the RFC does. ``lazy`` activates each
    device just before its first operator and deactivates it just after its last.
    Devices no operator uses are never activated.
    """
    if kind not in SCHEDULES:
        raise ValueError(kind)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for op in model.operators:
        if op.device is not None:
            first.setdefault(op.device, op.index)
            last[op.device] = op.index
    used = [d.name for d in model.devices if d.name in first]
    steps: list[Step] = []
    if kind == "eager":
        steps += [Step("activate", d) for d in used]
        steps += [Step("op", op.device, op.index) for op in model.operators]
        steps += [Step("deactivate", d) for d in reversed(used)]
        return tuple(steps)
    for op in model.operators:
        if op.device is not None and first[op.device] == op.index:
            steps.append(Step("activate", op.device))
        steps.append(Step("op", op.device, op.index))
        if op.device is not None and last[op.device] == op.index:
            steps.append(Step("deactivate", op.device))
    return tuple(steps)
