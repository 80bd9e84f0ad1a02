"""resize_bilinear (TFLite's RESIZE_BILINEAR): an NHWC tensor's H and W resized to
``size``, each output value interpolated between the input's two nearest rows and
columns as TFLM's reference kernels compute it.

float32: the source position is v * scale, or (v + 0.5) * scale - 0.5 with
half_pixel_centers (scale in / out, or (in - 1) / (out - 1) with align_corners, in
float32; ``scale_h`` and ``scale_w`` instead when set: ONNX's 1 / scale, float32 only);
the rows (columns) read are its floor, at least 0, and its ceiling, at most
in - 1; the weights are the position's distances to them.

int8: the same in fixed point with 10 fractional bits (``scale_10`` rounded to nearest,
the position v * scale_10 (+ scale_10 / 2 - 512), the rows its quotient by 1024 toward
zero, at least 0, and that rounded up, at most in - 1); the four products are summed
with 20 fractional bits and rounded, halves away from zero. The values keep the input's
quantization (TFLM interpolates them raw, whatever the output's says).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .resize import F32, scale_of
from .shapes import Shape, ShapeError


def bilinear_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    """The kernel params of resize_bilinear (float32 and int8 alike)."""
    x = shapes[0]
    assert x is not None
    align, half = int(attrs["align_corners"]), int(attrs["half_pixel_centers"])
    if align and half:
        raise ShapeError("resize_bilinear: align_corners and half_pixel_centers both set "
                         "(TFLM refuses the pair)")
    return {"N": x[0], "H": x[1], "W": x[2], "C": x[3], "OH": out[1], "OW": out[2],
            "scale_h": scale_of(x[1], out[1], align, attrs.get("scale_h", 0.0)),
            "scale_w": scale_of(x[2], out[2], align, attrs.get("scale_w", 0.0)),
            "scale_h_10": _scale_10(x[1], out[1], align),
            "scale_w_10": _scale_10(x[2], out[2], align), "half_pixel_centers": half}


def _scale_10(in_size: int, out_size: int, align: int) -> int:
    """TFLM's ratio of input to output positions with 10 fractional bits, rounded."""
    if align and out_size > 1:
        in_size, out_size = in_size - 1, out_size - 1
    return ((1 << 10) * in_size + out_size // 2) // out_size


def _float_taps(in_size: int, out_size: int, attrs: dict[str, Any], given: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each output position's lower and upper input index and its position (float32)."""
    scale = F32(scale_of(in_size, out_size, int(attrs["align_corners"]), given))
    v = np.arange(out_size).astype(F32)
    pos = (v + F32(0.5)) * scale - F32(0.5) if attrs["half_pixel_centers"] else v * scale
    lo = np.maximum(np.floor(pos).astype(np.int64), 0)
    hi = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return lo, hi, pos.astype(np.float64)


def bilinear_reference(x: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """float32 resize_bilinear of the NHWC array ``x``."""
    oh, ow = attrs["size"]
    y0, y1, py = _float_taps(x.shape[1], oh, attrs, attrs.get("scale_h", 0.0))
    x0, x1, px = _float_taps(x.shape[2], ow, attrs, attrs.get("scale_w", 0.0))
    dy = (py - y0)[None, :, None, None]
    dx = (px - x0)[None, None, :, None]
    rows0, rows1 = x[:, y0], x[:, y1]
    return np.asarray(rows0[:, :, x0] * (1 - dy) * (1 - dx) + rows1[:, :, x0] * dy * (1 - dx)
                      + rows0[:, :, x1] * (1 - dy) * dx + rows1[:, :, x1] * dy * dx)


def _int_taps(in_size: int, out_size: int, attrs: dict[str, Any]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each output position's lower and upper input index and its position (x 1024)."""
    s = _scale_10(in_size, out_size, int(attrs["align_corners"]))
    v = np.arange(out_size, dtype=np.int64) * s
    if attrs["half_pixel_centers"]:
        v = v + s // 2 - (1 << 9)
    lo = np.maximum(np.trunc(v / 1024).astype(np.int64), 0)
    hi = np.minimum(np.trunc((v + 1023) / 1024).astype(np.int64), in_size - 1)
    return lo, hi, v


def bilinear_s8_reference(x: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """int8 resize_bilinear of the NHWC array ``x``, as TFLM's ResizeBilinearInteger."""
    oh, ow = attrs["size"]
    y0, y1, py = _int_taps(x.shape[1], oh, attrs)
    x0, x1, px = _int_taps(x.shape[2], ow, attrs)
    fy = (py - 1024 * y0)[None, :, None, None]
    fx = (px - 1024 * x0)[None, None, :, None]
    v = x.astype(np.int64)
    rows0, rows1 = v[:, y0], v[:, y1]
    total = (rows0[:, :, x0] * (1024 - fy) * (1024 - fx) + rows1[:, :, x0] * fy * (1024 - fx)
             + rows0[:, :, x1] * (1024 - fy) * fx + rows1[:, :, x1] * fy * fx)
    rounded = np.where(total > 0, total + (1 << 19), total - (1 << 19))
    q = np.abs(rounded) >> 20
    return np.asarray(np.where(rounded < 0, -q, q)).astype(np.int8)
