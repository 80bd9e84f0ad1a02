"""int8 TRANSPOSE_CONV as TFLM's reference_integer_ops::TransposeConv computes it: int32
sums of ``(x + input_offset) * w`` (the weights symmetric, per channel or per tensor),
plus the int32 bias, requantized per output channel as conv2d's
(``PopulateConvolutionQuantizationParams``), offset and clamped to the fused
activation's range. Params are ``tvmk_conv2d_s8_params`` read as
:mod:`tvmdev.model.transpose_conv` says (pad_top, pad_left: where input pixel 0 lands
before the output)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..shapes import ShapeError
from ..transpose_conv import transpose_conv_dims, transpose_conv_sums
from .call import S8Call, S8Op
from .nn import finish, window_params


def _params(c: S8Call) -> dict[str, Any]:
    if c.attrs.get("layout") != "NHWC":
        raise ShapeError("int8 transpose_conv2d is NHWC (TFLite's layout) only")
    dims = transpose_conv_dims(c.shapes, c.attrs)
    return window_params(c, "transpose_conv2d", dims, ("M", "group"), dims["M"])


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _params(c)
    xv, w, b = x[0], x[1], x[2] if len(x) > 2 else None
    assert xv is not None and w is not None
    acc = transpose_conv_sums(np.asarray(xv, np.int64) + p["input_offset"],
                              np.asarray(w, np.int64), p, np.int64)
    return finish(c, p, acc, b)


OPS = {"transpose_conv2d": S8Op("tvmk_conv2d_s8_params", _params, _ref,
                                ("int8", "int8", "int32", "int8"), scratch=True)}
