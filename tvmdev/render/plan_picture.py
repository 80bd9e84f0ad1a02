"""Pictures of the memory plan: buffers over operator time, as TFLM's greedy planner
prints its plan (``PrintMemoryPlan``: one line per operator, the arena across) and as
TinyEngine's papers draw it (operators across, memory up).

* :func:`plan_svg`: ``tvmgen_<model>_plan.svg``, written beside plan.json: one rectangle
  per buffer, from the operator that first writes it to the one that last reads it, at
  its offset; each with a tooltip (its tensors, bytes, offset, lifetime);
* :func:`plan_ascii`: ``tvmdev aot --show-plan``: one line per operator, the arena in
  :data:`WIDTH` columns, each live buffer drawn with its letter, then the legend.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from ..model.graph import Model
from ..plan.memory import Buffer, MemoryPlan

WIDTH = 64  # the ASCII picture's columns for the whole arena
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# The SVG's fill of each kind of buffer.
COLOURS = {"intermediate": "#8fb8de", "input": "#f4a259", "output": "#8cc084",
           "scratch": "#c9c9c9", "state": "#b497d6"}
_CELL_W, _H, _MARGIN = 24, 360, 48


def kind_of(model: Model, b: Buffer) -> str:
    """intermediate, input, output, scratch or state."""
    if b.scratch_of is not None:
        return "scratch"
    if b.persistent:
        return "state"
    roles = {model.tensors[t].role for t in b.tensors}
    return next((r for r in ("input", "output") if r in roles), "intermediate")


def label_of(model: Model, b: Buffer) -> str:
    """What a buffer holds, in words."""
    if b.scratch_of is not None:
        return f"scratch of {model.operators[b.scratch_of].name}"
    return " = ".join(b.tensors)


def _ordered(plan: MemoryPlan) -> list[Buffer]:
    return sorted(plan.buffers, key=lambda b: (b.offset, b.start, b.size))


def plan_svg(model: Model, plan: MemoryPlan, banner: tuple[str, ...] = ()) -> str:
    """The SVG picture of the plan (deterministic: regenerating gives the same bytes);
    ``banner``: the lines of the generated files' banner, in its ``desc`` element (an
    XML comment may not hold the command's ``--``)."""
    n_ops = max(len(model.operators), 1)
    arena = max(plan.arena_size, 1)
    width = _MARGIN * 2 + n_ops * _CELL_W
    height = _MARGIN * 2 + _H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">',
           *(["<desc>", *(escape(line) for line in banner), "</desc>"] if banner else []),
           f"<title>{escape(model.name)}: workspace of {plan.arena_size:,} bytes "
           f"(lower bound {plan.lower_bound:,}) over {len(model.operators)} operators"
           "</title>",
           f'<rect x="{_MARGIN}" y="{_MARGIN}" width="{n_ops * _CELL_W}" height="{_H}" '
           'fill="none" stroke="#444"/>']
    for b in _ordered(plan):
        x = _MARGIN + b.start * _CELL_W
        w = (b.end - b.start + 1) * _CELL_W
        y0 = _MARGIN + _H - (b.offset + b.size) * _H / arena
        h = max(b.size * _H / arena, 0.5)
        tip = (f"{label_of(model, b)}: {b.size:,} bytes at offset {b.offset:,}, operators "
               f"{b.start}..{b.end}")
        out.append(f'<rect x="{x}" y="{y0:.2f}" width="{w}" height="{h:.2f}" '
                   f'fill="{COLOURS[kind_of(model, b)]}" stroke="#222" stroke-width="0.5">'
                   f"<title>{escape(tip)}</title></rect>")
    for i, op in enumerate(model.operators):
        mid = _MARGIN + i * _CELL_W + _CELL_W / 2
        out.append(f'<text x="{mid:.1f}" y="{_MARGIN + _H + 14}" text-anchor="middle">{i}'
                   f"<title>{escape(op.name)} ({escape(op.op)})</title></text>")
    out.append(f'<text x="{_MARGIN}" y="{_MARGIN - 8}">bytes 0..{plan.arena_size:,} (up); '
               "operators (across)</text>")
    for j, (kind, colour) in enumerate(COLOURS.items()):
        x = _MARGIN + j * 90
        out.append(f'<rect x="{x}" y="{height - 18}" width="10" height="10" '
                   f'fill={quoteattr(colour)}/><text x="{x + 14}" y="{height - 9}">'
                   f"{kind}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plan_ascii(model: Model, plan: MemoryPlan, width: int = WIDTH) -> list[str]:
    """The plan as text: one line per operator (the arena across ``width`` columns, each
    live buffer's letter over its bytes, '.' free), then each letter's buffer."""
    bufs = _ordered(plan)
    letter = {id(b): LETTERS[i % len(LETTERS)] for i, b in enumerate(bufs)}
    arena = max(plan.arena_size, 1)
    digits = len(str(max(len(model.operators) - 1, 0)))
    lines = [f"plan of {model.name}: {plan.arena_size:,} bytes (lower bound "
             f"{plan.lower_bound:,}); each column {arena / width:,.0f} bytes"]
    for i, op in enumerate(model.operators):
        row = ["."] * width
        live = 0
        for b in bufs:
            if b.start <= i <= b.end:
                # one that continues another in place is in that one's bytes at its start
                live += 0 if b.continues and i == b.start else b.size
                lo = b.offset * width // arena
                hi = max(-(-(b.offset + b.size) * width // arena), lo + 1)
                for c in range(lo, min(hi, width)):
                    row[c] = letter[id(b)]
        lines.append(f"{i:>{digits}} {''.join(row)} {live:>10,} {op.name}")
    lines += [f"  {letter[id(b)]}: {label_of(model, b)} ({kind_of(model, b)}), "
              f"{b.size:,} bytes at {b.offset:,}, operators {b.start}..{b.end}" for b in bufs]
    return lines
