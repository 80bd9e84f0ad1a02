"""int16 (16x8) TRANSPOSE_CONV as TFLM's reference_integer_ops::TransposeConv of int16
input, int8 weights and int64 bias computes it: int64 sums of ``x * w`` (no input
offset: TFLite's 16x8 activations are symmetric), plus the int64 bias, requantized per
output channel by the int64 ``MultiplyByQuantizedMultiplier`` (no output offset), and
clamped to int16 and the fused activation's range. TFLM widens an int16 bias to int64
and reads any other as int64: tvmdev takes an int64 bias (the TFLite frontend widens a
constant int16 one; an int32 one, which TFLM would misread, is refused). Params are
``tvmk_conv2d_s8_params`` read as :mod:`tvmdev.model.transpose_conv` says."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..s8 import transpose_conv as s8tc
from ..s8.call import S8Call, S8Op, refusing
from ..transpose_conv import transpose_conv_sums
from .nn import finish, refuse_zero_points, with_int16_range


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    refuse_zero_points(c, "transpose_conv2d")
    return with_int16_range(c, s8tc.OPS["transpose_conv2d"].params(c))


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _params(c)
    xv, w = x[0], x[1]
    assert xv is not None and w is not None
    acc = transpose_conv_sums(np.asarray(xv, np.int64), np.asarray(w, np.int64), p, np.int64)
    return finish(c, p, acc, x[2] if len(x) > 2 else None)


OPS = {"transpose_conv2d": S8Op("tvmk_conv2d_s8_params", _params, _ref,
                                ("int16", "int8", "int64", "int16"), scratch=True)}
