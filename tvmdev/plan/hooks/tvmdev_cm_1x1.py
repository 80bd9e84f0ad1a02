"""tvmdev_cm's 1x1 convolution (runtime/kernels/tvmdev_cm/conv1x1_s8.c): which ones it
takes, and the filter, biases and requantization laid out for it at generation time.

Taken: int8, no groups, no dilation, no padding, a constant filter and bias, output
shifts of at most :data:`LEFT_MAX` - 1 (the filter scaled by 2^(shift + 1) fits int16), and
the two proofs below. The filter is widened where it fits the board's flash budget
(``library_flash: {tvmdev_cm: BYTES}`` in its YAML: the bytes widening adds, the laid-out
words less the int8 filter and bias they replace, which are not emitted then; counted over
the model's 1x1 and general convolutions in order, each filter once), else kept int8
(:func:`pack_int8`: the kernel unpacks each filter word once for four pixels), which
needs a multiple of 4 input channels. Declined otherwise (CMSIS-NN, or the portable
kernel, takes it).

``packed_weights``, per group of four output channels (the last padded with zero
channels), 16 + 8 x quads words, quads the input channels in fours (the last padded):

- the four channels' accumulator starts: s (bias + input_offset x the sum of the
  channel's weights), int32 wrapping (SMLAD wraps alike), s = 2^(left shift + 1);
- per quad j, eight words: the four channels' int16 pairs (s w[4j], s w[4j + 2]), then
  their (s w[4j + 1], s w[4j + 3]): what SXTB16 of four activations, and of them rotated
  by 8, give. The weights are scaled (|s w| <= 2^15 for s <= 2^8), so the sum is TFLM's
  accumulator after its left shift, doubled: what its SaturatingRoundingDoublingHighMul
  takes as a single SMMULR (:func:`tvmdev.plan.hooks.tvmdev_cm.requant_exact` proves it
  fits int32), with no shift at run time;
- per channel a record: its multiplier; c = 2^(right - 1) + output_offset x 2^right (the
  offset alone for a right shift of 0); its right shift. The kernel computes (x + (x >> 31)
  + c) >> right (without the x >> 31 where right is 0), TFLM's rounding division plus the
  output offset, where :func:`offset_fits` proves the sum cannot overflow. A channel
  whose output is one value for every accumulator it can reach (:func:`channels`) gets
  zero weights and the record (0, 2 x that value, 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.fixedpoint import multiply_by_quantized_multiplier
from ...model.graph import Model, Operator
from ...model.s8.call import CArray

GROUP = 4  # output channels per group
LEFT_MAX = 8  # the largest left shift plus one: 128 x 2^8 is int16's 2^15


def _shifts(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per channel, the accumulator's scale exponent (left shift + 1) and right shift."""
    shift = np.asarray(p["output_shift"].values, np.int64)
    return np.maximum(shift, 0) + 1, np.maximum(-shift, 0)


def _c(right: np.ndarray, offset: int) -> np.ndarray:
    """The rounding and the output offset in one constant, per channel."""
    half = np.where(right > 0, np.left_shift(1, np.maximum(right - 1, 0)), 0)
    return np.asarray(half + offset * np.left_shift(1, right), np.int64)


def quads(p: dict[str, Any]) -> int:
    """The input channels in fours (the last padded)."""
    return (int(p["C"]) + 3) // 4


def scratch_bytes(p: dict[str, Any]) -> int:
    """Four pixels widened, two words per quad of input channels each (the int8 filter's
    tile; the widened one uses the first pixel's)."""
    return 32 * quads(p)


def packed_bytes(channels: int, inputs: int) -> int:
    """The bytes of the laid-out filter and records of a 1x1 convolution with ``channels``
    output and ``inputs`` input channels."""
    groups = -(-channels // GROUP)
    return 4 * groups * (16 + 8 * ((inputs + 3) // 4))


def is_pointwise(model: Model, op: Operator) -> bool:
    """A conv2d with a constant 1x1 filter (OHWI: M x 1 x 1 x C)."""
    filt = op.inputs[1] if len(op.inputs) > 1 else None
    if op.op != "conv2d" or filt is None or filt not in model.constants:
        return False
    shape = np.shape(model.constants[filt])
    return len(shape) == 4 and shape[1] == 1 and shape[2] == 1


def added_bytes(model: Model, op: Operator) -> int:
    """The flash widening ``op``'s filter adds: its packed words (filter, folded biases,
    records) less the int8 filter and the bias they replace (neither is emitted then)."""
    w = model.constants[op.inputs[1] or ""]
    shape = np.shape(w)
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    replaced = int(w.nbytes) + (int(model.constants[bias].nbytes)
                                if bias is not None and bias in model.constants else 0)
    return packed_bytes(int(shape[0]), int(np.prod(shape[1:]))) - replaced


def budget_left(model: Model, op: Operator, budget: int) -> int:
    """The flash budget left for ``op`` by the model's earlier 1x1 and general
    convolutions (:mod:`.tvmdev_cm_conv`, C its taps), each filter once (the bands of a
    patched layer share theirs, and decide alike) and each counted whether it is taken or
    not: an upper bound."""
    from .tvmdev_cm_conv import is_general
    seen = {op.inputs[1]}
    used = 0
    for other in model.operators:
        if other.index == op.index:
            break
        if (is_pointwise(model, other) or is_general(model, other)) and \
                other.inputs[1] not in seen:
            seen.add(other.inputs[1])
            used += added_bytes(model, other)
    return budget - used


def offset_fits(bound: np.ndarray, left: np.ndarray, mult: np.ndarray, c: np.ndarray
                ) -> bool:
    """Whether (x + (x >> 31) + c) stays in int32 for every SMMULR result x of an
    accumulator within ``bound`` scaled by 2^left (per channel: |x| <= (2^left bound m +
    2^31) >> 32)."""
    xmax = (bound.astype(object) * np.left_shift(1, left).astype(object)
            * mult.astype(object) + 2**31) // 2**32
    low = -xmax - 1 + c.astype(object)
    high = xmax + c.astype(object)
    return bool(all(-(2**31) <= lo and hi < 2**31 for lo, hi in zip(low, high, strict=True)))


@dataclass(frozen=True)
class Channels:
    """Per output channel, what the kernel's constants are made of."""

    left: np.ndarray  # the accumulator's scale exponent, left shift + 1
    mult: np.ndarray  # the multiplier (0: a constant channel)
    c: np.ndarray  # the rounding and output offset (a constant channel: 2 x its value)
    right: np.ndarray  # the right shift (a constant channel: 1)
    constant: np.ndarray  # its output is the same for every accumulator it can reach
    exact: np.ndarray  # the constant or the SMMULR shortcut is TFLM's


def channels(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]) -> Channels:
    """Each channel's requantization constants. A channel is constant when TFLM's
    MultiplyByQuantizedMultiplier, monotonic in the accumulator, gives the same value at
    both ends of the range it can reach (within int32, no left shift): a tiny scale over a
    huge bias (TFLM's output shift -31), whose doubled accumulator may not fit int32, or
    whose rounding constant would not; its record then gives that value whatever the
    accumulator."""
    from .tvmdev_cm import accumulator_bound
    left, right = _shifts(p)
    mult = np.asarray(p["output_multiplier"].values, np.int64)
    offset = int(p["output_offset"])
    c = _c(right, offset)
    b = np.zeros(w.shape[1], np.int64) if bias is None else bias.astype(np.int64)
    bound = accumulator_bound(w, bias, p["input_offset"])
    exact = bound * np.left_shift(1, left) < 2**31
    reach = bound - np.abs(b)
    lo, hi = b - reach, b + reach
    fits = (left == 1) & (lo >= -(2**31)) & (hi < 2**31)
    constant = np.zeros_like(exact)
    for m in np.flatnonzero(fits):
        ends = multiply_by_quantized_multiplier(np.array([lo[m], hi[m]]), mult[m],
                                                1 - int(left[m]) - int(right[m]))
        if ends[0] == ends[1]:
            constant[m] = True
            c[m] = 2 * (int(ends[0]) + offset)
    mult = np.where(constant, 0, mult)
    right = np.where(constant, 1, right)
    return Channels(left, mult, c, right, constant, exact | constant)


def decline(model: Model, op: Operator, p: dict[str, Any], w: np.ndarray,
            bias: np.ndarray | None, budget: int | None) -> str | None:
    """Why the 1x1 kernel does not take ``op`` (None: it does); ``w``: its filter,
    input channels x output channels; ``budget``: the board's flash budget for tvmdev_cm
    (None: it sets none)."""
    from .tvmdev_cm import accumulator_bound
    if p["pad_top"] != 0 or p["pad_left"] != 0:
        return "padding around a 1x1 filter (tvmdev_cm's 1x1 takes none)"
    left, _ = _shifts(p)
    if np.any(left > LEFT_MAX):
        m = int(np.argmax(left > LEFT_MAX))
        return (f"an output shift of {int(left[m]) - 1} in channel {m} (tvmdev_cm's 1x1 "
                f"scales its int16 filter by 2^(shift + 1), at most 2^{LEFT_MAX})")
    ch = channels(w, bias, p)
    if not np.all(ch.exact):
        m = int(np.argmin(ch.exact))
        return (f"channel {m}'s accumulator may reach 2^30 after its left shift and its "
                "output is not constant (tvmdev_cm's requantization doubles it)")
    bound = np.where(ch.constant, 0, accumulator_bound(w, bias, p["input_offset"]))
    if not offset_fits(bound, ch.left, ch.mult, ch.c):
        return ("a rounding constant and output offset that may overflow int32 "
                "(tvmdev_cm's 1x1 adds them in one step)")
    if not widened(model, op, p, budget) and int(p["C"]) % 4 != 0:
        need = added_bytes(model, op)
        room = budget_left(model, op, budget or 0)
        return (f"its filter widened adds {need} bytes, beyond the board's flash budget "
                f"({max(room, 0)} of {budget or 0} bytes left: library_flash: tvmdev_cm), "
                f"and {p['C']} input channels (its int8 filter's rows are read in words)")
    return None


def widened(model: Model, op: Operator, p: dict[str, Any], budget: int | None) -> bool:
    """Whether the filter is widened (within the budget), else kept int8."""
    return added_bytes(model, op) <= budget_left(model, op, budget or 0)


def _wrap32(v: np.ndarray) -> np.ndarray:
    return np.asarray((v.astype(np.int64) + 2**31) % 2**32 - 2**31, np.int64)


def pack_int8(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]
              ) -> dict[str, CArray]:
    """``folded_bias`` for the int8 filter: per channel its bias plus input_offset x the
    sum of its weights (unscaled), multiplier, left shift plus one, c, right shift."""
    ch = channels(w, bias, p)
    rec = np.zeros((w.shape[1], 5), np.int64)
    rec[:, 0] = (0 if bias is None else bias) + int(p["input_offset"]) * w.sum(axis=0)
    rec[:, 1], rec[:, 2], rec[:, 3], rec[:, 4] = ch.mult, ch.left, ch.c, ch.right
    return {"folded_bias": CArray("int32_t", tuple(int(v) for v in _wrap32(rec.reshape(-1))),
                                  replaces=(2,))}


def pack(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]) -> dict[str, CArray]:
    """``packed_weights`` (the module's docstring) of the filter ``w`` (C x M)."""
    c, m = w.shape
    q, groups = (c + 3) // 4, -(-m // GROUP)
    ch = channels(w, bias, p)
    scale = np.where(ch.constant, 0, np.left_shift(1, ch.left))  # a constant's: no sum
    wide = np.zeros((4 * q, GROUP * groups), np.int64)
    wide[:c, :m] = w * scale
    b = np.zeros(GROUP * groups, np.int64)
    b[:m] = scale * ((0 if bias is None else bias) + int(p["input_offset"]) * w.sum(axis=0))
    rec = np.zeros((GROUP * groups, 3), np.int64)
    rec[:m, 0] = ch.mult
    rec[:m, 1] = ch.c
    rec[:m, 2] = ch.right
    # per channel and quad: the even pair (w[4j], w[4j + 2]), the odd one (w[4j+1], w[4j+3])
    quad = wide.reshape(q, 4, -1)
    even = (quad[:, 0] & 0xFFFF) | (quad[:, 2] << 16)
    odd = (quad[:, 1] & 0xFFFF) | (quad[:, 3] << 16)
    words = []
    for g in range(groups):
        at = slice(GROUP * g, GROUP * (g + 1))
        body = np.stack([even[:, at], odd[:, at]], axis=1).reshape(-1)  # q x 2 x 4
        words += [b[at], body, rec[at].reshape(-1)]
    return {"packed_weights": CArray("int32_t", tuple(int(v) for v in
                                                     _wrap32(np.concatenate(words))),
                                     replaces=(1, 2))}
