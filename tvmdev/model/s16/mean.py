"""int16 MEAN, as TFLM computes it (reduce_common.cc's PrepareMeanOrSumHelper and
EvalIntegerMean<int16_t>, reference_ops::QuantizedMeanOrSum): the int8 form's arithmetic
(:mod:`..s8.mean`: the group's int32 sum less the input zero point times its size,
requantized by input_scale / output_scale with 1 / size folded into the multiplier, plus
the output zero point), clamped to int16. Zero points are read, so any is taken. The sum
is TFLM's int32 one, wrapping as its ``AddTensorValuesWithExpectedOverflow``. Params are
``tvmk_mean_s8_params``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier
from ..s8 import mean as s8mean
from ..s8.call import S8Call, S8Op, refusing

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


def _wrap32(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (np.asarray(v, np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)
    return out


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    result: dict[str, Any] = s8mean.OPS["mean"].params(c)
    return result


@refusing
def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _params(c)
    axes = tuple(d for d, stride in enumerate(p["out_strides"][:p["ndim"]]) if stride == 0)
    total = _wrap32(np.asarray(x[0], np.int64).reshape(p["shape"][:p["ndim"]])
                    .sum(axis=axes))
    shifted = _wrap32(total - p["input_zero_point"] * p["reduced"])
    y = multiply_by_quantized_multiplier(shifted, p["multiplier"], p["shift"])
    out = np.clip(y + p["output_zero_point"], I16_MIN, I16_MAX)
    return np.asarray(out, np.int16).reshape(c.out_shape)


OPS = {"mean": S8Op("tvmk_mean_s8_params", _params, _ref, ("int16", "int16"))}
