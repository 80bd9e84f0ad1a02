"""Why tvmdev refuses an ONNX node case of Resize or ConvTranspose, worked out from the
model alone (tests/test_onnx_import.py's ``_refusal``): the pattern the one line must
match, or None when the case must import.

Resize maps onto tvmdev's resizes (tvmdev/frontends/onnx_resize.py): nearest, linear and
cubic with every coordinate transformation but tf_crop_and_resize, antialias,
exclude_outside. ConvTranspose is 1-D or 2-D.
"""

from __future__ import annotations

from typing import Any


def _attrs(n: Any) -> dict[str, Any]:
    from onnx import helper
    out = {}
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _rank(model: Any, name: str) -> int:
    for vi in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        if vi.name == name:
            return len(vi.type.tensor_type.shape.dim)
    return -1


def _resize(model: Any, n: Any) -> str | None:
    a = _attrs(n)
    coord = a.get("coordinate_transformation_mode", "half_pixel")
    if coord == "tf_crop_and_resize":
        mode = a.get("mode", "nearest")
        return rf"Resize \(mode {mode}, coordinate_transformation_mode {coord}"
    return None


def shape_refusal(model: Any) -> str | None:
    """The pattern of the line refusing ``model``'s Resize or ConvTranspose, or None."""
    for n in model.graph.node:
        if n.op_type == "Resize":
            reason = _resize(model, n)
            if reason:
                return r"1 unsupported operator: " + reason
        if n.op_type == "ConvTranspose" and _rank(model, n.input[0]) not in (3, 4):
            return r"1 unsupported operator: ConvTranspose \(3-D\)"
    return None
