"""A device kind's constant layouts (issue 23, docs/device-memory.md): how the kind wants
the constants its kernels read from its own memory, laid out at generation time.

A ``new-device --memory`` folder has ``kernels/<kind>_layouts.yaml`` (schema
``device_layouts``), a scaffold: the user's, kept across regeneration. Each entry names an
operator, one of its inputs (the names of ``tvmdev list ops``: conv2d's ``W``) and the
steps applied to that constant, in order:

- ``permute: [axes]``: ``numpy.transpose`` (OHWI -> OIHW is ``[0, 3, 1, 2]``);
- ``pad: {axis: A, multiple: M}``: zeros at the end of axis A up to a multiple of M.

The executor loads the laid-out bytes into the device's memory; the kernel's params keep
the operator's own shapes, and the kernel reads the constant in its layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import TvmdevError, Where
from ..model.ops import OPS
from . import yamlio
from .schema import validate


@dataclass(frozen=True)
class LayoutStep:
    """One step: ``permute`` (axes) or ``pad`` (axis, multiple)."""

    kind: str
    axes: tuple[int, ...]  # permute: the new order; pad: (axis, multiple)


@dataclass(frozen=True)
class Layout:
    """How device kind ``kind`` wants input ``arg`` of its ``op`` kernels laid out."""

    kind: str
    op: str
    arg: str
    steps: tuple[LayoutStep, ...]
    where: Where

    def describe(self) -> str:
        """The steps as plan.json and the notes write them."""
        return ", ".join(f"permute {list(s.axes)}" if s.kind == "permute"
                         else f"pad axis {s.axes[0]} to a multiple of {s.axes[1]}"
                         for s in self.steps)


def layouts_file(device_dir: Path, kind: str) -> Path:
    """Where a folder keeps ``kind``'s layouts."""
    return device_dir / "kernels" / f"{kind}_layouts.yaml"


def load_layouts(device_dir: Path, kinds: list[str]) -> tuple[Layout, ...]:
    """The layouts of ``kinds`` in a new-device folder (none where a kind has no file)."""
    out: list[Layout] = []
    for kind in kinds:
        path = layouts_file(device_dir, kind)
        if not path.is_file():
            continue
        doc = yamlio.load(path)
        validate(doc, "device_layouts", str(path))
        for op, args in (doc["layouts"] or {}).items():
            where = yamlio.where_of(doc["layouts"], op, Where(str(path), 1))
            if op not in OPS:
                raise TvmdevError(f"layouts: no operator '{op}'", where,
                                  hint="the operators: tvmdev list ops")
            for arg, steps in args.items():
                if arg not in OPS[op].inputs:
                    raise TvmdevError(f"layouts: {op} has no input '{arg}'", where,
                                      hint=f"{op}'s inputs: {', '.join(OPS[op].inputs)}")
                out.append(Layout(kind, op, arg, tuple(
                    LayoutStep("permute", tuple(s["permute"])) if "permute" in s else
                    LayoutStep("pad", (s["pad"]["axis"], s["pad"]["multiple"]))
                    for s in steps), yamlio.where_of(args, arg, where)))
    return tuple(out)
