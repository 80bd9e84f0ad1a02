"""int8 RESIZE_BILINEAR as TFLM's ResizeBilinearInteger computes it (10 fractional bits
of position, the values interpolated raw: the output keeps the input's quantization,
whatever its own says, as TFLM's Prepare checks nothing more). Params are the float
kernel's struct, ``tvmk_resize_bilinear_params`` (``tvmk_portable.h``), whose
``scale_h_10`` and ``scale_w_10`` the int8 kernel reads."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..resize_bilinear import bilinear_params, bilinear_s8_reference
from ..shapes import ShapeError
from .call import S8Call, S8Op


def _params(c: S8Call) -> dict[str, Any]:
    if c.attrs.get("scale_h") or c.attrs.get("scale_w"):
        raise ShapeError("int8 resize_bilinear takes TFLM's ratios, not scale_h / scale_w")
    return bilinear_params(c.shapes, c.out_shape, c.attrs)


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return bilinear_s8_reference(np.asarray(v), c.attrs)


OPS = {"resize_bilinear": S8Op("tvmk_resize_bilinear_params", _params, _ref, ("int8", "int8"))}
