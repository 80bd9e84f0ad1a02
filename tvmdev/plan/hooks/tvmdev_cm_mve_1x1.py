"""tvmdev_cm's Helium (MVE) 1x1 convolution over more than
:data:`tvmdev_cm_mve.PW_CHANNELS_MAX` input channels, or strided
(runtime/kernels/tvmdev_cm/conv1x1_s8_mve.c, tvmk_cm_mve_mm.h): which it takes, and its
scratch.

Four output pixels at a time are copied into a tile (interleaved by 16 bytes, zero past
C), then each pair of output channels runs over it: per 16 input channels two loads of
weights (the OHWI filter's rows as they are: nothing laid out, no flash), four of the
tile and eight VMLADAVs. Its requantization is TFLM's exactly (VQRDMULH and a rounding
shift, as the depthwise MVE path's), so it needs no proof per layer.

Taken: a 1x1 filter, no groups, no dilation, no padding, any stride, any pixel count.
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator

CHANNEL_BYTES = 20  # an output channel's folded bias, multiplier and shifts
TILE_ROWS = 4  # output pixels a tile


def scratch_bytes(p: dict[str, Any]) -> int:
    """The output channels' constants, then the tile: four pixels' inputs, C rounded up
    to 16."""
    return int(CHANNEL_BYTES * p["M"] + TILE_ROWS * 16 * -(-p["C"] // 16) + 32)


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the kernel does not take the 1x1 ``op`` (None: it does): its filter and
    padding were checked by the caller."""
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    return None
