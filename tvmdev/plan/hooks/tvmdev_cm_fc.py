"""tvmdev_cm's int8 fully connected (runtime/kernels/tvmdev_cm/fully_connected_s8.c, the DSP
path; fully_connected_s8_mve.c, the Helium one): which layers it takes and what it lays
out for them at generation time.

Taken: int8, constant weights (and bias, if any), a weights zero point of 0 (TFLite's int8
weights are symmetric), weights per tensor or per output channel. The weights stay TFLM's
(out_size rows of in_size int8: no flash beyond the model's). ``kernel_sums``, per row,
the bias plus input_offset times the sum of the row's weights (int32, wrapping: the
kernels' multiply-accumulates wrap alike), so the kernels multiply the raw inputs:
sum(w * x) + bias + input_offset * sum(w) is TFLM's sum(w * (x + input_offset)) + bias.

- DSP (SMLAD, Cortex-M4/M7/M33): the input row widened once per call into the scratch
  (:func:`scratch_bytes`: two words per four inputs, (x[4j], x[4j + 2]) and (x[4j + 1],
  x[4j + 3]), the order SXTB16 splits a word of four weights into), then four rows at a
  time share each input load. Its requantization is SMMULR (``tvmk_cm_requantize``),
  exact where :func:`requant_exact` proves the accumulator,
  doubled after its left shift, fits int32: declined otherwise.
- Helium (MVE, Cortex-M55): sixteen weights of four rows per VMLADAVA against one load of
  the input, requantization of the four rows in one vector, TFLM's exactly (VQRDMULH and
  a rounding shift: no proof needed). No scratch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray


def _operands(model: Model, op: Operator, p: dict[str, Any]
              ) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The constant weights (rows x columns) and bias (or None); None when either is
    computed at run time."""
    names = [t for t in op.inputs[1:3] if t is not None]
    if any(t not in model.constants for t in names):
        return None
    w = np.asarray(model.constants[names[0]], np.int64).reshape(p["out_size"], p["in_size"])
    b = op.inputs[2] if len(op.inputs) > 2 else None
    return w, None if b is None else np.asarray(model.constants[b], np.int64).reshape(-1)


def requant_exact(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]) -> bool:
    """Whether every row's accumulator (TFLM's, at most |bias| + sum(|w|) x the largest
    |x + input_offset|), doubled after its left shift, fits int32: SMMULR is then TFLM's
    saturating rounding doubling high multiply (tvmk_cm_arith.h)."""
    from .tvmdev_cm import accumulator_bound
    shifts = p["channel_shift"]
    shift = np.asarray(shifts.values if shifts is not None else [p["output_shift"]],
                       np.int64)
    bound = accumulator_bound(w.T, bias, int(p["input_offset"]))
    return bool(np.all(bound * 2 ** (np.maximum(shift, 0) + 1) < 2**31))


def decline(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """Why tvmdev_cm's fully connected does not take ``op`` (int8) on a core of code path
    ``arch`` (None: it does)."""
    got = _operands(model, op, p)
    if got is None:
        return "weights or a bias computed at run time (tvmdev_cm folds them ahead)"
    if p["weights_offset"] != 0:
        return (f"a weights zero point of {-p['weights_offset']} (tvmdev_cm's fully "
                "connected takes 0)")
    w, bias = got
    if arch != "mve" and not requant_exact(w, bias, p):
        return ("an accumulator that may reach 2^30 after its left shift (tvmdev_cm's "
                "requantization doubles it)")
    return None


def scratch_bytes(arch: str, p: dict[str, Any]) -> int:
    """The DSP path's scratch: the input row widened, two words per four inputs (the last
    four padded); none on Helium."""
    return 0 if arch == "mve" else 8 * ((int(p["in_size"]) + 3) // 4)


def precomputed(model: Model, op: Operator, p: dict[str, Any]) -> dict[str, CArray]:
    """``kernel_sums``: per row, bias + input_offset x the sum of its weights, wrapped
    to int32."""
    got = _operands(model, op, p)
    if got is None:
        return {}
    w, bias = got
    sums = (np.zeros(w.shape[0], np.int64) if bias is None else bias) \
        + int(p["input_offset"]) * w.sum(axis=1)
    wrapped = (sums + 2**31) % 2**32 - 2**31
    return {"kernel_sums": CArray("int32_t", tuple(int(v) for v in wrapped))}
