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
  time share each input load. ``kernel_sums`` goes on with a record per row (16 bytes of
  flash): its multiplier, its left shift plus one, c = 2^(right - 1) + output_offset x
  2^right (the offset alone for a right shift of 0) and its right shift, then one word,
  1 when some row's right shift is 0. The kernel computes x = SMMULR(acc x 2^(left + 1),
  multiplier), then (x + (x >> 31) + c) >> right (no x >> 31 where right is 0): TFLM's
  MultiplyByQuantizedMultiplier plus the offset, exact where the 1x1 kernel's proofs hold
  for every row (:func:`tvmdev.plan.hooks.tvmdev_cm_1x1.channels`: the accumulator,
  doubled after its left shift, fits int32, or the row's output is one value for every
  accumulator it can reach, whose record is (0, its left shift + 1, 2 x (that value +
  output_offset), 1);
  :func:`tvmdev.plan.hooks.tvmdev_cm_1x1.offset_fits`: the sum cannot overflow): declined
  otherwise.
- Helium (MVE, Cortex-M55): sixteen weights of four rows per VMLADAVA against one load of
  the input, requantization of the four rows in one vector, TFLM's exactly (VQRDMULH and
  a rounding shift: no proof needed). No scratch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from .tvmdev_cm_1x1 import Channels, channels, offset_fits


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


def _requant(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]
             ) -> tuple[Channels, bool]:
    """Per row, the 1x1 kernel's requantization constants (its weights ``w.T``: columns x
    rows), and whether the rounding constant plus offset provably fits int32."""
    from .tvmdev_cm import accumulator_bound
    rows = int(p["out_size"])
    if p["channel_multiplier"] is not None:
        mult, shift = p["channel_multiplier"], p["channel_shift"]
    else:
        mult = CArray("int32_t", (int(p["output_multiplier"]),) * rows)
        shift = CArray("int32_t", (int(p["output_shift"]),) * rows)
    q = {"output_multiplier": mult, "output_shift": shift,
         "output_offset": p["output_offset"], "input_offset": p["input_offset"]}
    ch = channels(w.T, bias, q)
    bound = np.where(ch.constant, 0, accumulator_bound(w.T, bias, int(p["input_offset"])))
    return ch, offset_fits(bound, ch.left, ch.mult, ch.c)


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
    if arch == "mve":
        return None
    ch, fits = _requant(w, bias, p)
    if not np.all(ch.exact):
        m = int(np.argmin(ch.exact))
        return (f"row {m}'s accumulator may reach 2^30 after its left shift and its output "
                "is not constant (tvmdev_cm's requantization doubles it)")
    if not fits:
        return ("a rounding constant and output offset that may overflow int32 "
                "(tvmdev_cm's fully connected adds them in one step)")
    return None


def scratch_bytes(arch: str, p: dict[str, Any]) -> int:
    """The DSP path's scratch: the input row widened, two words per four inputs (the last
    four padded); none on Helium."""
    return 0 if arch == "mve" else 8 * ((int(p["in_size"]) + 3) // 4)


def precomputed(model: Model, op: Operator, p: dict[str, Any], arch: str
                ) -> dict[str, CArray]:
    """``kernel_sums``: per row, bias + input_offset x the sum of its weights, wrapped
    to int32; on the DSP path then the rows' records and the flag (the module's
    docstring)."""
    got = _operands(model, op, p)
    if got is None:
        return {}
    w, bias = got
    sums = (np.zeros(w.shape[0], np.int64) if bias is None else bias) \
        + int(p["input_offset"]) * w.sum(axis=1)
    words = [sums]
    if arch != "mve":
        ch, _ = _requant(w, bias, p)
        rec = np.stack([ch.mult, ch.left, ch.c, ch.right], axis=1)
        words += [rec.reshape(-1), np.array([int(np.any(ch.right == 0))], np.int64)]
    wrapped = (np.concatenate(words) + 2**31) % 2**32 - 2**31
    # the bias is in the sums: the kernels do not read it
    return {"kernel_sums": CArray("int32_t", tuple(int(v) for v in wrapped), replaces=(2,))}
