"""Which taps of a window meet the input, along one dim: the numpy references compute
the windowed ops over those alone, as the kernels' loops do (they skip the padding), so
a window, dilation or padding far larger than the input costs what the kernels' own
loops cost, never a padded copy of the input.

Output ``o``'s tap ``t`` reads input position ``o * stride - pad + t * dil``; it meets
the input when that is in ``[0, size)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tap:
    """Tap ``tap`` of the window, which the outputs ``outs`` meet the input with, at the
    input positions ``ins`` (one per output, ``stride`` apart)."""

    tap: int
    outs: slice
    ins: slice


def taps(size: int, k: int, stride: int, dil: int, pad: int, out: int) -> list[Tap]:
    """Every tap of a window of ``k`` (``dil`` apart) that meets an input of ``size``
    padded by ``pad`` at the start, for ``out`` outputs ``stride`` apart; in tap order."""
    first = np.arange(out, dtype=np.int64) * stride - pad  # where each output's tap 0 is
    lo = np.maximum(0, -(first // dil))  # its first tap at or after position 0
    hi = np.minimum(k - 1, (size - 1 - first) // dil)  # its last before position size
    keep = lo <= hi
    # Both bounds fall as the output moves on: reversed, the intervals are sorted.
    lo, hi = lo[keep][::-1], hi[keep][::-1]
    if not lo.size:
        return []
    reach = np.maximum.accumulate(hi)
    gaps = np.flatnonzero(lo[1:] > reach[:-1] + 1) + 1
    starts = lo[np.concatenate([[0], gaps])]
    ends = reach[np.concatenate([gaps - 1, [lo.size - 1]])]
    found = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        for t in range(a, b + 1):
            off = t * dil - pad  # input position = o * stride + off
            o0, o1 = max(0, -(off // stride)), min(out, (size - 1 - off) // stride + 1)
            if o0 < o1:
                found.append(Tap(t, slice(o0, o1), slice(o0 * stride + off,
                                                         (o1 - 1) * stride + off + 1, stride)))
    return found


def counts(k: int, stride: int, dil: int, pad: int, out: int, lo: int, hi: int
           ) -> np.ndarray:
    """For each of ``out`` outputs, how many of its taps fall in ``[lo, hi)`` (input
    positions: ``[0, size)`` for the input, ``[-pad, size + pad_end)`` for the padded
    input)."""
    first = np.arange(out, dtype=np.int64) * stride - pad
    t0 = np.maximum(0, -((first - lo) // dil))
    t1 = np.minimum(k - 1, (hi - 1 - first) // dil)
    return np.asarray(np.maximum(0, t1 - t0 + 1))
