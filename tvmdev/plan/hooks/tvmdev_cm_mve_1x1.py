"""tvmdev_cm's Helium (MVE) 1x1 convolution over more than
:data:`.tvmdev_cm_mve.PW_CHANNELS_MAX` input channels, or strided
(runtime/kernels/tvmdev_cm/conv1x1_s8_mve.c, tvmk_cm_mve_mm.h): which it takes, and its
scratch.

Four output pixels at a time are copied into a tile (interleaved by 16 bytes, zero past
C), then each pair of output channels runs over it: per 16 input channels two loads of
weights (the OHWI filter's rows as they are: nothing laid out, no flash), four of the
tile and eight VMLADAVs. Its requantization is TFLM's exactly (VQRDMULH and a rounding
shift, as the depthwise MVE path's), so it needs no proof per layer.

Taken: a 1x1 filter, no groups, no dilation, no padding, any stride, and pixels that fill
their tiles within :data:`WASTE_MAX` (a last tile's missing rows are computed and not
stored: 3x3's nine pixels are three tiles, 1.33x the work, and CMSIS-NN's kernel wins
there: measured on mps3_an547, 3x3x256 -> 256 181,781 against 146,594 instructions).

Measured on mps3_an547 (QEMU -icount, one-layer models, instructions against CMSIS-NN
v7's MVE 1x1 in the same build): 25x5x64 -> 64 (keyword_spotting) 124,344 against 203,031
(0.61x), 6x6x128 -> 128 118,063 against 166,563 (0.71x); before the pass's last trim (3
instructions less a channel pair): 12x12x64 -> 64 0.61x, 24x24x32 -> 32 0.58x, 5x5x160 ->
160 0.82x, 40x40x17 -> 24 0.61x, 24x24x16 -> 32 0.54x.
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator

CHANNEL_BYTES = 20  # an output channel's folded bias, multiplier and shifts
TILE_ROWS = 4  # output pixels a tile
WASTE_MAX = 1.125  # the rows computed over the pixels stored


def scratch_bytes(p: dict[str, Any]) -> int:
    """The output channels' constants (one more: an odd M's last pass reads it), the
    tile (four pixels' inputs, C rounded up to 16), the pass's eight sums, and 8 bytes
    where an odd M's last channel is staged."""
    return int(CHANNEL_BYTES * (p["M"] + 1) + TILE_ROWS * 16 * -(-p["C"] // 16) + 40)


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the kernel does not take the 1x1 ``op`` (None: it does): its filter and
    padding were checked by the caller."""
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    pixels = int(p["N"] * p["OH"] * p["OW"])
    rows = -(-pixels // TILE_ROWS) * TILE_ROWS
    if rows > WASTE_MAX * pixels:
        return (f"{pixels} pixels in tiles of {TILE_ROWS} ({rows} rows computed: tvmdev_cm's "
                f"MVE 1x1 takes at most {WASTE_MAX:g}x, CMSIS-NN's runs fewer instructions)")
    return None
