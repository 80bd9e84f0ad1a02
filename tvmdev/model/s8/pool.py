"""int8 AVERAGE_POOL_2D and MAX_POOL_2D, NHWC, as TFLM's pooling_common Prepare and
reference_integer_ops compute them: the input and output share one quantization (TFLM
refuses otherwise), padded positions are left out (the average divides by the number of
positions inside the input, rounding half away from zero), and the fused activation
clamps. Params are ``tvmk_pool2d_s8_params`` (``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..quant import Quant
from ..shapes import Shape
from ..windowed import LAYOUTS, pool_params
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import act_range, scalar

FIELDS = ("N", "H", "W", "C", "KH", "KW", "OH", "OW", "stride_h", "stride_w", "pad_top",
          "pad_left")


def params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any], activation: str,
           qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_pool2d_s8_params`` from the op's resolved attributes (as the op table's
    ``resolve_window`` leaves them) and the input and output quantization."""
    base = pool_params(shapes, out, attrs)
    if base["layout"] != LAYOUTS.index("NHWC"):
        raise ValueError("int8 pooling is NHWC (TFLite) only")
    if base["dil_h"] != 1 or base["dil_w"] != 1 or base["count_include_pad"]:
        raise ValueError("int8 pooling has no dilation and never counts padding")
    (si, zi), (so, zo) = scalar(qin, "the input"), scalar(qout, "the output")
    if abs(si - so) > 1e-6 or zi != zo:
        raise ValueError(f"int8 pooling needs the output quantized as the input (TFLM "
                         f"refuses otherwise): scale {si} vs {so}, zero point {zi} vs {zo}")
    lo, hi = act_range(activation, qout)
    return {**{k: base[k] for k in FIELDS}, "act_min": lo, "act_max": hi}


def windows(x: np.ndarray, p: dict[str, Any]) -> Any:
    """Each output position (oy, ox) with the input's window there, clipped to the input."""
    for oy in range(p["OH"]):
        y0 = oy * p["stride_h"] - p["pad_top"]
        ys = slice(max(y0, 0), min(y0 + p["KH"], p["H"]))
        for ox in range(p["OW"]):
            x0 = ox * p["stride_w"] - p["pad_left"]
            xs = slice(max(x0, 0), min(x0 + p["KW"], p["W"]))
            yield oy, ox, x[:, ys, xs, :]


def avg_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 average pooling of NHWC ``x`` with ``params``' values."""
    y = np.zeros((p["N"], p["OH"], p["OW"], p["C"]), np.int64)
    for oy, ox, win in windows(x.astype(np.int64), p):
        count = win.shape[1] * win.shape[2]
        if count == 0:
            raise ValueError("a pooling window lies wholly in the padding")
        acc = win.sum(axis=(1, 2))
        y[:, oy, ox, :] = np.sign(acc) * ((np.abs(acc) + count // 2) // count)
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int8)


def max_reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 max pooling of NHWC ``x`` with ``params``' values."""
    y = np.full((p["N"], p["OH"], p["OW"], p["C"]), -128, np.int64)
    for oy, ox, win in windows(x.astype(np.int64), p):
        if win.size:
            y[:, oy, ox, :] = win.max(axis=(1, 2))
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int8)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    return params(c.shapes, c.out_shape, c.attrs, c.attrs.get("activation", "NONE"),
                  quant_of(c, 0, "the input"), quant_of(c, -1, "the output"))


def _avg_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _params(c)
    v = np.asarray(x[0]).reshape(p["N"], p["H"], p["W"], p["C"])
    return avg_reference(v, p).reshape(c.out_shape)


def _max_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _params(c)
    v = np.asarray(x[0]).reshape(p["N"], p["H"], p["W"], p["C"])
    return max_reference(v, p).reshape(c.out_shape)


OPS = {
    "avgpool2d": S8Op("tvmk_pool2d_s8_params", _params, _avg_ref, ("int8", "int8"), scratch=True),
    "maxpool2d": S8Op("tvmk_pool2d_s8_params", _params, _max_ref, ("int8", "int8"), scratch=True),
}
