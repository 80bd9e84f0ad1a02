"""int8 SVDF, TFLM's EvalIntegerSvdfReference: int8 input and feature weights, time
weights and state int16 (or both int8), int32 bias.

The state shifts one step back in time; each filter's newest slot gets its feature dot
product (input less its zero point), rescaled by ``in * weights_feature / state`` scales,
clamped to the state's type, plus the state's zero point. The time step: per filter, the
time weights dot the state less its zero point (int32); per unit, the bias plus its
``rank`` filters; rescaled by ``state * weights_time / out`` and clamped to int8. TFLM
applies no fused activation here. Params are ``tvmk_svdf_s8_params``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..recurrent import svdf_dims
from ..shapes import ShapeError
from .call import S8Call, S8Op, per_tensor, refusing

F32 = np.float32


@refusing
def svdf_params(c: S8Call) -> dict[str, Any]:
    """The sizes and the two requantizations, as TFLM's PrepareSvdf computes them (the
    scales multiplied in float32)."""
    d = svdf_dims(c.shapes, c.attrs)
    if c.dtypes[2] != c.dtypes[4]:
        raise ShapeError(f"int8 svdf: weights_time ({c.dtypes[2]}) and the state "
                         f"({c.dtypes[4]}) must have one dtype, int16 or int8")
    if c.dtypes[3] is None:
        raise ShapeError("int8 svdf needs its bias (TFLM's integer SVDF reads its scale)")
    s_in, z_in = per_tensor(c.quants[0], "the input")
    s_wf, _ = per_tensor(c.quants[1], "weights_feature")
    s_wt, _ = per_tensor(c.quants[2], "weights_time")
    s_b, _ = per_tensor(c.quants[3], "the bias")
    s_st, z_st = per_tensor(c.quants[4], "the state")
    s_out, z_out = per_tensor(c.out_quant, "the output")
    if abs(float(s_b) - float(F32(s_st) * F32(s_wt))) >= 1e-5:
        raise ShapeError(f"the bias scale {s_b:g} must be the state's times weights_time's "
                         "(TFLM checks it)")
    m1, sh1 = quantize_multiplier(float(F32(s_in) * F32(s_wf) / F32(s_st)))
    m2, sh2 = quantize_multiplier(float(F32(s_st) * F32(s_wt) / F32(s_out)))
    bits = 16 if c.dtypes[4] == "int16" else 8
    return {**d, "input_zero_point": z_in, "state_zero_point": z_st,
            "output_zero_point": z_out, "scale_1_multiplier": m1, "scale_1_shift": sh1,
            "scale_2_multiplier": m2, "scale_2_shift": sh2,
            "state_min": -(1 << (bits - 1)), "state_max": (1 << (bits - 1)) - 1}


def _wrap(v: np.ndarray) -> np.ndarray:
    """int64 values as int32 wraps them."""
    out: np.ndarray = (v + (1 << 31)) % (1 << 32) - (1 << 31)
    return out


def svdf_reference(c: S8Call, x: list[np.ndarray | None]
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The int8 output and the new state."""
    p = svdf_params(c)
    inp, wf, wt, bias, state = x
    assert inp is not None and wf is not None and wt is not None and state is not None
    assert bias is not None
    b, f, m = p["batch"], p["num_filters"], p["memory_size"]
    mem = state.astype(np.int64).reshape(b, f, m)
    dot = (inp.astype(np.int64) - p["input_zero_point"]) @ wf.astype(np.int64).T  # b, f
    new = multiply_by_quantized_multiplier(dot, p["scale_1_multiplier"], p["scale_1_shift"])
    new = np.clip(new, p["state_min"], p["state_max"]) + p["state_zero_point"]
    mem = np.concatenate([mem[:, :, 1:], new[:, :, None]], axis=2)
    # TFLM accumulates the time products and each unit's sum in int32, which wraps on
    # every target it runs on (scrambled weights, as in its keyword model, do wrap): so
    # does this reference, and the C kernels, in unsigned arithmetic.
    per_filter = _wrap(np.einsum("bfm,fm->bf", mem - p["state_zero_point"],
                                 wt.astype(np.int64)))
    acc = _wrap(per_filter.reshape(b, p["num_units"], p["rank"]).sum(axis=2)
                + bias.astype(np.int64))
    y = multiply_by_quantized_multiplier(acc, p["scale_2_multiplier"], p["scale_2_shift"])
    out = np.clip(y + p["output_zero_point"], -128, 127).astype(np.int8)
    # the state keeps its dtype's wrap (the zero point added after the clamp, as TFLM)
    kept = mem.astype(np.int16 if p["state_max"] > 127 else np.int8)
    return out.reshape(c.out_shape), [kept.reshape(state.shape)]


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    return svdf_reference(c, x)[0]


OPS = {
    "svdf": S8Op("tvmk_svdf_s8_params", svdf_params, _ref,
                 ("int8", "int8", "int16|int8", "int32", "int16|int8", "int8"), scratch=True),
}
STATEFUL = {"svdf": svdf_reference}
