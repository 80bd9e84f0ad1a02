"""Why tvmdev refuses an ONNX node case of ConvTranspose, worked out from the
model alone (tests/test_onnx_import.py's ``_refusal``): the pattern the one line must
match, or None when the case must import.

Every Resize case imports (tvmdev/frontends/onnx_resize.py: nearest, linear and cubic,
every coordinate transformation, antialias, exclude_outside). ConvTranspose is 1-D or 2-D.
"""

from __future__ import annotations

from typing import Any


def _rank(model: Any, name: str) -> int:
    for vi in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        if vi.name == name:
            return len(vi.type.tensor_type.shape.dim)
    return -1


def shape_refusal(model: Any) -> str | None:
    """The pattern of the line refusing ``model``'s ConvTranspose, or None."""
    for n in model.graph.node:
        if n.op_type == "ConvTranspose" and _rank(model, n.input[0]) not in (3, 4):
            return r"1 unsupported operator: ConvTranspose \(3-D\)"
    return None
