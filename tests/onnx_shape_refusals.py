"""Why tvmdev refuses an ONNX node case of Resize or ConvTranspose, worked out from the
model alone (tests/test_onnx_import.py's ``_refusal``): the pattern the one line must
match, or None when the case must import.

Resize maps onto tvmdev's resizes (tvmdev/frontends/onnx_resize.py): linear with the
half_pixel, pytorch_half_pixel (no output dim of 1), align_corners and asymmetric
coordinates; nearest with those and tf_half_pixel_for_nn, every nearest_mode.
ConvTranspose is 1-D or 2-D.
"""

from __future__ import annotations

from typing import Any

COORDS = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn"}
ROUNDINGS = {"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}
LINEAR = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}


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
    if a.get("antialias", 0):
        return r"Resize \(antialias\)"
    mode = a.get("mode", "nearest")
    coord = a.get("coordinate_transformation_mode", "half_pixel")
    rounding = a.get("nearest_mode", "round_prefer_floor")
    if (mode == "nearest" and (coord not in COORDS or rounding not in ROUNDINGS)) or (
            mode != "nearest" and (mode != "linear" or coord not in LINEAR)):
        return rf"Resize \(mode {mode}, coordinate_transformation_mode {coord}"
    out = [vi for vi in model.graph.output if vi.name == n.output[0]][0]
    dims = [d.dim_value for d in out.type.tensor_type.shape.dim]
    if coord == "pytorch_half_pixel" and 1 in dims[2:]:
        return r"Resize \(pytorch_half_pixel to an output dim of 1\)"
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
