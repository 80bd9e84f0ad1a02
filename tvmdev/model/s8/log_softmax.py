"""int8 LOG_SOFTMAX over the last axis, TFLM's algorithm (log_softmax Prepare and
reference_ops::LogSoftmax for int8): as softmax, each input's difference from its row's
maximum scaled by input_scale into Q5.26 and gemmlowp's exp_on_negative_values summed in
Q12.19; the log of that sum (TFLite's log_x_for_x_greater_than_or_equal_to_1) in Q5.26 is
subtracted from each scaled difference, which is rounded to 1/16 steps below 127.
Differences at or below a threshold (diff_min, or where the subtraction would leave
Q5.26: reverse_scaling_divisor and reverse_scaling_right_shift scale it back) give -128.
The output must be quantized as TFLM demands: scale 16/256, zero point 127. Params are
``tvmk_log_softmax_s8_params`` (``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import INT32_MIN, multiply_by_quantized_multiplier, quantize_multiplier
from ..quant import Quant
from ..shapes import Shape, ShapeError, norm_axis, numel
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar
from .gemmlowp import exp_on_negative_values, log_x_ge_1, rdbpot, wrap32
from .softmax import (
    ACCUMULATION_INTEGER_BITS,
    SCALED_DIFF_INTEGER_BITS,
    input_radius,
    multiplier_greater_than_one,
)

OUTPUT_INTEGER_BITS = 4
OUTPUT_SCALE, OUTPUT_ZERO_POINT = 16.0 / 256, 127


def params(shape: Shape, qin: Quant, qout: Quant) -> dict[str, Any]:
    """``tvmk_log_softmax_s8_params`` for a log-softmax over the last axis of ``shape``."""
    si, _ = scalar(qin, "the input")
    so, zo = scalar(qout, "the output")
    if so != OUTPUT_SCALE or zo != OUTPUT_ZERO_POINT:
        raise ValueError(f"an int8 log-softmax output must have scale 16/256 and zero "
                         f"point 127 (TFLM refuses others), got {so} and {zo}")
    real = min(si * (1 << (31 - SCALED_DIFF_INTEGER_BITS)), (1 << 31) - 1.0)
    if real <= 1.0:  # QuantizeMultiplierGreaterThanOne's TFLITE_CHECK
        raise ValueError(f"the input scale {si} is too small for TFLite's int8 "
                         "log-softmax (TFLM aborts)")
    mult, shift = multiplier_greater_than_one(real)
    reverse, reverse_shift = quantize_multiplier((1 << (31 - shift)) / float(mult))
    depth = shape[-1] if shape else 1
    return {"outer": numel(shape) // depth if depth else 0, "depth": depth,
            "input_multiplier": mult, "input_left_shift": shift,
            "reverse_scaling_divisor": reverse, "reverse_scaling_right_shift": -reverse_shift,
            "diff_min": -input_radius(SCALED_DIFF_INTEGER_BITS, shift)}


def reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 log-softmax over the last axis of ``x`` with ``params``' values."""
    def scaled(d: np.ndarray) -> np.ndarray:
        return multiply_by_quantized_multiplier(d, p["input_multiplier"],
                                                p["input_left_shift"])

    rows = x.reshape(-1, p["depth"]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    live = diff >= p["diff_min"]
    exps = exp_on_negative_values(scaled(np.where(live, diff, 0)), SCALED_DIFF_INTEGER_BITS)
    total = wrap32(np.where(live, rdbpot(exps, ACCUMULATION_INTEGER_BITS), 0)
                   .sum(axis=1, keepdims=True))
    log_sum = log_x_ge_1(total, ACCUMULATION_INTEGER_BITS, SCALED_DIFF_INTEGER_BITS)
    limit = multiply_by_quantized_multiplier(log_sum + INT32_MIN, p["reverse_scaling_divisor"],
                                             -p["reverse_scaling_right_shift"])
    above = diff > np.maximum(p["diff_min"] - 1, limit)
    bits = 31 - SCALED_DIFF_INTEGER_BITS - OUTPUT_INTEGER_BITS
    out = rdbpot(scaled(np.where(above, diff, 0)) - log_sum, bits) + 127
    out = np.where(above, np.clip(out, -128, 127), -128)
    return out.astype(np.int8).reshape(x.shape)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    shape = c.out_shape or (1,)
    if norm_axis(c.attrs.get("axis", -1), len(shape)) != len(shape) - 1:
        raise ShapeError("an int8 log_softmax is over the last axis (TFLite's)")
    return params(shape, quant_of(c, 0, "the input"), quant_of(c, -1, "the output"))


@refusing
def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return reference(np.asarray(x[0]), _params(c)).reshape(c.out_shape)


OPS = {"log_softmax": S8Op("tvmk_log_softmax_s8_params", _params, _ref, ("int8", "int8"))}
