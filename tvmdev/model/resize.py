"""Shape inference, kernel params and reference of resize_nearest (TFLite's
RESIZE_NEAREST_NEIGHBOR): an NHWC tensor's H and W resized to ``size``, each output row
and column copied from the input's nearest one as TFLM picks it, in float32: the output
index (plus 0.5 with half_pixel_centers) times in / out (or (in - 1) / (out - 1) with
align_corners), floored (rounded, halves away from zero, with align_corners), at most
in - 1 (and at least 0 with half_pixel_centers). ``scale_h`` and ``scale_w``, when set,
are the ratios instead (ONNX's Resize: 1 / its scale); ``rounding`` floor or ceil (ONNX's
nearest modes) takes the floor or ceiling of the position plus ``offset`` instead, at
least 0 and at most in - 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .shapes import Shape, ShapeError

F32 = np.float32
# How resize_nearest rounds a position: TFLM's (floor, or halves away from zero with
# align_corners), or (ONNX's modes) the floor or ceiling of the position plus `offset`.
ROUNDINGS = ("tflm", "floor", "ceil")


def resize_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of resize_nearest and resize_bilinear: [N, size[0], size[1], C]."""
    x = shapes[0]
    assert x is not None
    if len(x) != 4:
        raise ShapeError(f"a resize takes a 4-D NHWC input, got {list(x)}")
    oh, ow = attrs["size"]
    if oh < 1 or ow < 1:
        raise ShapeError(f"a resize's size {list(attrs['size'])} must be positive")
    return (x[0], oh, ow, x[3])


def scale_of(in_size: int, out_size: int, align_corners: int, given: float = 0.0) -> float:
    """TFLM's float32 ratio of input to output positions; ``given`` instead when set
    (an ONNX Resize's 1 / scale)."""
    if given:
        return float(F32(given))
    if align_corners and out_size > 1:
        return float(F32(in_size - 1) / F32(out_size - 1))
    return float(F32(in_size) / F32(out_size))


def resize_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                  ) -> dict[str, Any]:
    """The kernel params of resize_nearest (float32 and int8 alike)."""
    x = shapes[0]
    assert x is not None
    align = int(attrs["align_corners"])
    return {"N": x[0], "H": x[1], "W": x[2], "C": x[3], "OH": out[1], "OW": out[2],
            "scale_h": scale_of(x[1], out[1], align, attrs.get("scale_h", 0.0)),
            "scale_w": scale_of(x[2], out[2], align, attrs.get("scale_w", 0.0)),
            "align_corners": align, "half_pixel_centers": int(attrs["half_pixel_centers"]),
            "rounding": ROUNDINGS.index(attrs.get("rounding", "tflm")),
            "offset": float(attrs.get("offset", 0.0))}


def nearest(in_size: int, out_size: int, attrs: dict[str, Any], given: float = 0.0
            ) -> np.ndarray:
    """The input index each of ``out_size`` output positions copies, as TFLM computes it
    (``given``: the ratio set instead of TFLM's)."""
    align, half = int(attrs["align_corners"]), int(attrs["half_pixel_centers"])
    f = (np.arange(out_size).astype(F32) + F32(0.5 if half else 0.0)) * F32(
        scale_of(in_size, out_size, align, given))
    rounding = attrs.get("rounding", "tflm")
    if rounding != "tflm":  # ONNX's: the floor or ceiling of f + offset, in float32
        g = (f + F32(attrs.get("offset", 0.0))).astype(np.float64)
        index = np.floor(g) if rounding == "floor" else np.ceil(g)
        return np.asarray(np.clip(index.astype(np.int64), 0, in_size - 1))
    v = f.astype(np.float64)
    index = np.sign(v) * np.floor(np.abs(v) + 0.5) if align else np.floor(v)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.asarray(np.maximum(index, 0) if half else index)


def resize_reference(x: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """resize_nearest of the NHWC array ``x``."""
    oh, ow = attrs["size"]
    rows = nearest(x.shape[1], oh, attrs, attrs.get("scale_h", 0.0))
    cols = nearest(x.shape[2], ow, attrs, attrs.get("scale_w", 0.0))
    return np.asarray(x[:, rows][:, :, cols])
