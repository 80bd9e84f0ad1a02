"""tvmdev_cm's Helium (MVE) general convolution (runtime/kernels/tvmdev_cm/
conv2d_gen_s8_mve.c, its block core tvmk_cm_mve_mm.h): which conv2d it takes on the
Cortex-M55, its scratch, and the filter and constants laid out for it at generation time.

Taken: int8, no groups, no dilation, more than one tap per input channel (KH x KW > 1),
any stride and padding, a constant filter and bias, at most :data:`TAPS_MAX` taps per
output channel (KH x KW x C: two windows of them in the scratch). Two output pixels'
windows at a time are gathered into the scratch (each its taps rounded up to
:data:`CHUNK` bytes, the padding the input's zero point, the two interleaved a chunk at
a time), then each group of four output channels takes six vector loads and eight
VMLADAVA per chunk of 16 taps, reading four rows of the filter.

The filter is read as it is (OHWI: an output channel's taps in the window's order) when
its taps are a whole number of chunks (C a multiple of 16: image_classification's 3x3
layers), so it costs no flash. Otherwise (a first convolution: 27 or 40 taps)
``packed_weights`` (int8, as int32 words) is each output channel's row padded with
zeros to whole chunks, the filter again (a few hundred bytes to a few KiB: the lead's
change makes a kernel's layout replace the filter).

``folded_bias``, per group, five vectors of four words: the bias plus input_offset times
the sum of the channel's taps (int32 wrapping, as VMLADAVA accumulates: sum(w * x) over a
window whose padding holds the zero point plus this is TFLM's accumulator modulo 2^32),
the multiplier, the left shift, minus the right shift, and -1 where the right shift is
positive (the fix-up that makes VRSHL's ties-up rounding TFLM's ties-away-from-zero).
Requantization is TFLM's MultiplyByQuantizedMultiplier exactly (as the depthwise path's,
tests/test_tvmdev_cm_mve.py checks its arithmetic at the edges), so it needs no proof
per layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray

CHUNK = 16  # taps per vector of int8
GROUP = 4  # output channels per group
TAPS_MAX = 4096  # taps per output channel: two windows of at most 4 KiB each in the scratch


def chunks(p: dict[str, Any]) -> int:
    """A window's vectors: its KH x KW x C taps rounded up to 16."""
    return -(-int(p["KH"] * p["KW"] * p["C"]) // CHUNK)


def scratch_bytes(p: dict[str, Any]) -> int:
    """Two windows, interleaved a chunk at a time; with C not a multiple of 16, a third
    (the staging area a window is gathered into whole)."""
    return (2 if p["C"] % CHUNK == 0 else 3) * CHUNK * chunks(p)


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the general MVE convolution does not serve ``op`` (None: it does)."""
    if p["group"] != 1 or p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a grouped or dilated convolution (tvmdev_cm's MVE conv2d takes neither)"
    if p["KH"] * p["KW"] < 2:
        return "a 1x1 filter (tvmdev_cm's MVE general conv2d takes more taps)"
    taps = p["KH"] * p["KW"] * p["C"]
    if taps > TAPS_MAX:
        return (f"{taps} taps per output channel (tvmdev_cm's MVE conv2d takes at most "
                f"{TAPS_MAX})")
    if any(t not in model.constants for t in op.inputs[1:] if t is not None):
        return "a filter or bias computed at run time (tvmdev_cm lays them out ahead)"
    return None


def _wrap32(v: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in (v.astype(np.int64) + 2**31) % 2**32 - 2**31)


def pack(model: Model, op: Operator, p: dict[str, Any]) -> dict[str, CArray]:
    """Each group's constants, and the filter's rows padded to whole chunks where its taps
    are not (the module's docstring)."""
    filt = op.inputs[1]
    assert filt is not None
    m, n = int(p["M"]), chunks(p)
    w = np.asarray(model.constants[filt], np.int64).reshape(m, -1)
    groups = -(-m // GROUP)
    laid: dict[str, CArray] = {}
    if w.shape[1] % CHUNK:
        padded = np.zeros((m, n * CHUNK), np.int64)
        padded[:, :w.shape[1]] = w
        words = np.frombuffer(padded.astype("<i1").tobytes(), "<i4")
        # the kernel reads these rows instead of the filter
        laid["packed_weights"] = CArray("int32_t", tuple(int(x) for x in words),
                                        replaces=(1,))
    b = op.inputs[2] if len(op.inputs) > 2 else None
    bias = np.zeros(m, np.int64) if b is None else \
        np.asarray(model.constants[b], np.int64).reshape(-1)
    shift = np.asarray(p["output_shift"].values, np.int64)
    rows = np.zeros((5, groups * GROUP), np.int64)
    rows[0, :m] = bias + int(p["input_offset"]) * w.sum(axis=1)
    rows[1, :m] = np.asarray(p["output_multiplier"].values, np.int64)
    rows[2, :m] = np.maximum(shift, 0)
    rows[3, :m] = np.minimum(shift, 0)
    rows[4, :m] = -(shift < 0).astype(np.int64)
    consts = rows.reshape(5, groups, GROUP).transpose(1, 0, 2)
    return {**laid, "folded_bias": CArray("int32_t", _wrap32(consts.ravel()), replaces=(2,))}
