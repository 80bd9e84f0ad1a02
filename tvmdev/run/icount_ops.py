"""Per-operator instruction counts (``tvmdev run --instructions --per-operator``).

The firmware (``templates/harness/firmware/main.c.j2``) defines the executor's TRACE hook:
after each operator's kernel call the generated code calls it, and it records the
instruction counter (:mod:`tvmdev.run.icount`: SysTick under QEMU -icount). Before the run
the firmware times 64 back-to-back calls of the same hook, so the host knows what each
record itself costs and takes it out of every operator's count. It prints::

    tvmdev: icount hook ticks T calls N
    tvmdev: icount op INDEX ticks T       (one per trace call, in the order of the calls)

An operator's count is the ticks since the record before it (the first: since the run
call began, the executor's set-up included), less one hook's; what follows the last
record (the executor's epilogue) is the last row. The hook's cost varies by a few
instructions with where the counter stands; the table's total is the run's own count
less the hooks', so its rows add up to it within a tick per operator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..plan.pipeline import Compiled
from .icount import NS_PER_INSTRUCTION

_HOOK = re.compile(r"^tvmdev: icount hook ticks (\d+) calls (\d+)$", re.M)
_OP = re.compile(r"^tvmdev: icount op (-?\d+) ticks (\d+)$", re.M)


@dataclass(frozen=True)
class OpCount:
    """One operator's instructions (``index`` -1: the executor after the last one)."""

    index: int
    instructions: int


def op_counts(stdout: str, total_ticks: int, clock_hz: int) -> list[OpCount] | None:
    """Each traced operator's instructions, in run order, then the epilogue's; None when
    the firmware printed no records."""
    hook = _HOOK.search(stdout)
    records = [(int(m[1]), int(m[2])) for m in _OP.finditer(stdout)]
    if hook is None or not records:
        return None
    per_tick = 10**9 // NS_PER_INSTRUCTION / clock_hz  # instructions per tick
    hook_ticks = int(hook[1]) / int(hook[2])
    out, last = [], 0
    for i, (index, ticks) in enumerate(records):
        own = ticks - last - hook_ticks * (1 if i else 0.5)  # the first: half a call
        out.append(OpCount(index, max(0, round(own * per_tick))))
        last = ticks
    out.append(OpCount(-1, max(0, round((total_ticks - last - 0.5 * hook_ticks) * per_tick))))
    return out


def table(compiled: Compiled, counts: Sequence[OpCount]) -> list[str]:
    """The per-operator lines ``tvmdev run`` prints, heaviest share last column."""
    model = compiled.model
    total = sum(c.instructions for c in counts) or 1
    rows = [("#", "operator", "op", "kernel", "instructions", "share")]
    for c in counts:
        if c.index < 0:
            rows.append(("", "(after the last operator)", "", "", f"{c.instructions:,}",
                         f"{100 * c.instructions / total:.1f}%"))
            continue
        op = model.operators[c.index]
        prep = compiled.ops[c.index]
        kernel = "(view)" if prep.view_of else (prep.chain[0].name if prep.chain else "")
        rows.append((str(c.index), op.name, op.op, kernel, f"{c.instructions:,}",
                     f"{100 * c.instructions / total:.1f}%"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["instructions per operator (QEMU -icount, each ±1 tick; the hooks' own "
             "instructions taken out):"]
    for r in rows:
        lines.append("  " + "  ".join(
            r[i].rjust(widths[i]) if i in (0, 4, 5) else r[i].ljust(widths[i])
            for i in range(len(r))).rstrip())
    lines.append(f"  total {total:,}")
    return lines
