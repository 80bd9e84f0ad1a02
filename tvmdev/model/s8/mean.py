"""int8 MEAN, as TFLM's reduce_common Prepare and reference_ops::QuantizedMeanOrSum
compute it (whatever keep_dims and the axes): the int32 sum of each reduced group, less
the input zero point times the group's size, requantized by input_scale / output_scale
with 1 / size folded into the multiplier (TFLM's adjustment: the multiplier shifted up by
floor(log2(size)), at most 32 and 31 + shift, then divided by size), plus the output zero
point. Params are ``tvmk_mean_s8_params`` (``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..quant import Quant
from ..regions import mean_params
from ..shapes import Shape, norm_axis
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar


def fold_count(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """TFLite's multiplier and shift for a mean over ``count`` values, from those of the
    scale ratio: 1 / count folded in."""
    if count <= 0:
        return multiplier, shift
    lift = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << lift) // count, shift - lift


def params(shapes: list[Shape | None], out: Shape, axes: tuple[int, ...], keepdims: bool,
           qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_mean_s8_params`` for the mean over ``axes``."""
    (si, zi), (so, zo) = scalar(qin, "the input"), scalar(qout, "the output")
    base = mean_params(shapes, out, {"axes": axes, "keepdims": int(keepdims)})
    mult, shift = fold_count(*quantize_multiplier(si / so), base["reduced"])
    return {**base, "input_zero_point": zi, "multiplier": mult, "shift": shift,
            "output_zero_point": zo}


def reference(x: np.ndarray, axes: tuple[int, ...], keepdims: bool, p: dict[str, Any]
              ) -> np.ndarray:
    """int8 mean of ``x`` over ``axes`` with ``params``' values."""
    total = x.astype(np.int64).sum(axis=axes, keepdims=keepdims)
    shifted = total - p["input_zero_point"] * p["reduced"]
    y = multiply_by_quantized_multiplier(shifted, p["multiplier"], p["shift"])
    out: np.ndarray = np.clip(y + p["output_zero_point"], -128, 127).astype(np.int8)
    return out


def _axes(c: S8Call) -> tuple[int, ...]:
    x = c.shapes[0]
    assert x is not None
    axes = c.attrs.get("axes")
    return tuple(range(len(x))) if axes is None else tuple(norm_axis(a, len(x)) for a in axes)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    return params(c.shapes, c.out_shape, _axes(c), bool(c.attrs.get("keepdims", 1)),
                  quant_of(c, 0, "the input"), quant_of(c, -1, "the output"))


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _params(c)
    return reference(np.asarray(x[0]), _axes(c), bool(c.attrs.get("keepdims", 1)),
                     p).reshape(c.out_shape)


OPS = {"mean": S8Op("tvmk_mean_s8_params", _params, _ref, ("int8", "int8"))}
