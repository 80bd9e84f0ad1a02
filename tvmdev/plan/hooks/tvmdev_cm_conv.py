"""tvmdev_cm's general convolution (runtime/kernels/tvmdev_cm/conv_general_s8.c): a conv2d
with more taps per output channel (KH x KW x C) than the first-convolution kernel's
:data:`TAPS_MAX`, on the ``dsp`` path (Cortex-M4/M7/M33). Each output pixel's window is a
1x1 convolution over its taps, so the 1x1's layout, proofs and group cores
(:mod:`.tvmdev_cm_1x1`, conv1x1_s8.c) serve it with C read as the taps: the window, padded
with the input's zero point (so that the bias folded with input_offset times the sum of
the taps is TFLM's accumulator over the taps inside the input), is widened into the
scratch, and the filter is either widened at generation time (:func:`.tvmdev_cm_1x1.pack`
over the taps) or kept int8 (:func:`.tvmdev_cm_1x1.pack_int8`: four pixels a pass, each
filter word unpacked once for the four), which needs a multiple of 4 taps.

Taken: int8, no groups, no dilation, any filter size, stride and padding, a constant
filter and bias, output shifts of at most :data:`.tvmdev_cm_1x1.LEFT_MAX` - 1, and the
1x1's proofs (every channel's accumulator doubled after its left shift fits int32, or its
output is constant; the rounding constant and output offset added in one step cannot
overflow). The widened filters are counted with the 1x1's against the board's flash
budget (``library_flash``), in the model's order (:func:`.tvmdev_cm_1x1.budget_left`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from . import tvmdev_cm_1x1

TAPS_MAX = 32  # the first-convolution kernel's (tvmdev_cm.TAPS_MAX, TVMK_CM_TAPS_MAX)


def is_general(model: Model, op: Operator) -> bool:
    """A conv2d with a constant filter (OHWI) of more than one tap per input channel and
    more than :data:`TAPS_MAX` taps per output channel."""
    filt = op.inputs[1] if len(op.inputs) > 1 else None
    if op.op != "conv2d" or filt is None or filt not in model.constants:
        return False
    shape = np.shape(model.constants[filt])
    return (len(shape) == 4 and shape[1] * shape[2] > 1
            and int(np.prod(shape[1:])) > TAPS_MAX)


def taps(p: dict[str, Any]) -> int:
    """The taps per output channel, KH x KW x C."""
    return int(p["KH"] * p["KW"] * p["C"])


def scratch_bytes(p: dict[str, Any]) -> int:
    """Four windows widened (32 bytes per quad of taps: the int8 filter's tile; the
    widened one uses the first), then a window's bytes rounded up to a quad, where the
    windows at the input's edges are gathered before they are widened."""
    quads = (taps(p) + 3) // 4
    return 32 * quads + 4 * quads


def widened(model: Model, op: Operator, p: dict[str, Any], budget: int | None) -> bool:
    """Whether the filter is widened (within what the budget has left), else kept int8."""
    need = tvmdev_cm_1x1.added_bytes(model, op)
    return need <= tvmdev_cm_1x1.budget_left(model, op, budget or 0)


def decline(model: Model, op: Operator, p: dict[str, Any], w: np.ndarray,
            bias: np.ndarray | None, budget: int | None) -> str | None:
    """Why the general kernel does not take ``op`` (None: it does); ``w``: its filter,
    taps x output channels; ``budget``: the board's flash budget for tvmdev_cm."""
    from .tvmdev_cm import accumulator_bound
    shift = np.asarray(p["output_shift"].values, np.int64)
    left = np.maximum(shift, 0) + 1
    if np.any(left > tvmdev_cm_1x1.LEFT_MAX):
        m = int(np.argmax(left > tvmdev_cm_1x1.LEFT_MAX))
        return (f"an output shift of {int(left[m]) - 1} in channel {m} (tvmdev_cm's "
                "convolution scales its int16 filter by 2^(shift + 1), at most "
                f"2^{tvmdev_cm_1x1.LEFT_MAX})")
    ch = tvmdev_cm_1x1.channels(w, bias, p)
    if not np.all(ch.exact):
        m = int(np.argmin(ch.exact))
        return (f"channel {m}'s accumulator may reach 2^30 after its left shift and its "
                "output is not constant (tvmdev_cm's requantization doubles it)")
    bound = np.where(ch.constant, 0, accumulator_bound(w, bias, p["input_offset"]))
    if not tvmdev_cm_1x1.offset_fits(bound, ch.left, ch.mult, ch.c):
        return ("a rounding constant and output offset that may overflow int32 "
                "(tvmdev_cm's convolution adds them in one step)")
    if not widened(model, op, p, budget) and taps(p) % 4 != 0:
        need = tvmdev_cm_1x1.added_bytes(model, op)
        room = tvmdev_cm_1x1.budget_left(model, op, budget or 0)
        return (f"its filter widened adds {need} bytes, beyond the board's flash budget "
                f"({max(room, 0)} of {budget or 0} bytes left: library_flash: tvmdev_cm), "
                f"and {taps(p)} taps per output channel (its int8 filter's rows are read "
                "in words)")
    return None


def pack(model: Model, op: Operator, w: np.ndarray, bias: np.ndarray | None,
         p: dict[str, Any], budget: int | None) -> dict[str, CArray]:
    """The 1x1's constants over the taps: the widened filter within the budget, else the
    int8 filter's records."""
    if widened(model, op, p, budget):
        return tvmdev_cm_1x1.pack(w, bias, p)
    return tvmdev_cm_1x1.pack_int8(w, bias, p)
