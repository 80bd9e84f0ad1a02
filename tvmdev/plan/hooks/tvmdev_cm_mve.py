"""tvmdev_cm's Helium (MVE) code path (``arch: mve``, the Cortex-M55): which operators it
takes there and the scratch each needs (runtime/kernels/tvmdev_cm/*_mve.c). The library's
hooks (:mod:`.tvmdev_cm`) hand an ``mve`` core's questions here.

depthwise_conv2d (int8): taken with a channel multiplier of 1, no dilation, a square 3x3
or 7x7 filter, one stride (1 or 2) in both directions, at least :data:`MIN_OUTPUTS`
outputs per channel and k^2 / stride^2 >= :data:`MIN_REUSE`, and a scratch of at most
:data:`PLANE_MAX` bytes. Measured on mps3_an547 (QEMU -icount), CMSIS-NN v7's MVE
depthwise kernel takes 1.5 to 3.6 instructions per multiply-accumulate on MCUNet VWW's
layers (it copies each tap's channels into an im2col buffer); this path takes a gather
and a VMLA per tap and four outputs, plus a fixed cost per channel (the plane's copy, the
taps, the requantization's set-up), so it wins on the larger planes: 40x40x16 3x3 0.48x
CMSIS-NN's instructions, 20x20x48 3x3 0.70x, 20x20x48 7x7 stride 2 0.72x, and loses on
5x5 and 3x3 planes (declined). keyword_spotting's 25x5x64 3x3 layers are a tie. Its
requantization is TFLM's exactly (VQRDMULH and a rounding shift), so it needs no proof
per layer. Its scratch is the plane (int32), each output's window address, then the
channel's k x k taps as int32.

conv2d (int8): taken with a 1x1 filter, stride 1, no padding, no groups and at most
:data:`PW_CHANNELS_MAX` input channels (one vector: four pixels' inputs stay in registers
while every output channel passes over them, one VMLADAV per output), at least 4 pixels.
Its scratch is each output channel's bias folded with the input offset times the sum of
its weights, and its requantization's multiplier and shifts (20 bytes a channel).
CMSIS-NN's MVE 1x1 kernel reloads the four pixels and sums the weights per output channel:
on MCUNet VWW's C <= 16 layers it runs about 1.8x the instructions (40x40, 8 to 48
channels: 1.30 M against 0.72 M).

conv2d with more than one tap per input channel (3x3, a first convolution's 3x3x3 or
10x4x1): :mod:`.tvmdev_cm_mve_conv` decides, lays out and sizes it.

Everything else: declined; CMSIS-NN's Helium kernels serve it.
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from . import tvmdev_cm_mve_conv

SIZES = (3, 7)  # a 5x5 variant would not fit MCUNet VWW's code in the M55's ITCM
STRIDES = (1, 2)
# Where it wins (measured on mps3_an547 against CMSIS-NN v7, MCUNet VWW's and
# keyword_spotting's layers): its cost per channel is a fixed part (the plane's copy, the
# taps, the loop's set-up), so it needs enough outputs per channel, and enough taps per
# input element the plane copies (k^2 / stride^2).
MIN_OUTPUTS = 64
PW_CHANNELS_MAX = 16  # conv2d: input channels, one vector of int8
MIN_REUSE = 4
PLANE_MAX = 32 * 1024  # bytes of one channel's plane and windows in the workspace


def plane_bytes(p: dict[str, Any]) -> int:
    """depthwise_conv2d's scratch on MVE: one channel's plane as int32 (every row and
    column a window reads), then each output's window address (the outputs rounded up to
    8: two vectors at a time), then the channel's k x k taps as int32."""
    s, k = p["stride_h"], p["KH"]
    rows = (p["OH"] - 1) * s + k
    cols = (p["OW"] - 1) * s + k
    lanes = -(-(p["OH"] * p["OW"]) // 8) * 8
    return int(4 * (rows * cols + lanes + k * k))


def _depthwise(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    if p["mult"] != 1:
        return f"a channel multiplier of {p['mult']} (tvmdev_cm takes 1)"
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    if p["KH"] != p["KW"] or p["KH"] not in SIZES:
        return f"a {p['KH']}x{p['KW']} filter (tvmdev_cm's MVE path takes 3x3 and 7x7)"
    if p["stride_h"] != p["stride_w"] or p["stride_h"] not in STRIDES:
        return f"strides {p['stride_h']}x{p['stride_w']} (tvmdev_cm takes 1x1 and 2x2)"
    if any(t not in model.constants for t in op.inputs[1:] if t is not None):
        return "a filter or bias computed at run time (tvmdev_cm lays them out ahead)"
    outputs, reuse = p["OH"] * p["OW"], p["KH"] * p["KW"] / p["stride_h"] ** 2
    if outputs < MIN_OUTPUTS or reuse < MIN_REUSE:
        return (f"{outputs} outputs per channel, {reuse:g} taps per input copied "
                f"(tvmdev_cm's MVE path takes at least {MIN_OUTPUTS} and {MIN_REUSE}: "
                "CMSIS-NN's runs fewer instructions on fewer)")
    if plane_bytes(p) > PLANE_MAX:
        return f"a plane of {plane_bytes(p)} bytes (tvmdev_cm takes at most {PLANE_MAX})"
    return None


def _pointwise(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    if p["KH"] * p["KW"] > 1:
        return tvmdev_cm_mve_conv.decline(model, op, p)
    if p["KH"] != 1 or p["KW"] != 1 or p["group"] != 1:
        return (f"a {p['KH']}x{p['KW']} filter in {p['group']} group(s) (tvmdev_cm's MVE "
                "conv2d takes a 1x1 filter, no groups)")
    if (p["stride_h"], p["stride_w"], p["pad_top"], p["pad_left"]) != (1, 1, 0, 0) or (
            p["OH"], p["OW"]) != (p["H"], p["W"]):
        return "a stride or padding (tvmdev_cm's MVE conv2d takes stride 1, no padding)"
    if p["C"] > PW_CHANNELS_MAX:
        return (f"{p['C']} input channels (tvmdev_cm's MVE conv2d takes at most "
                f"{PW_CHANNELS_MAX}: one vector)")
    if p["N"] * p["OH"] * p["OW"] < 4:
        return "fewer than 4 pixels (tvmdev_cm's MVE conv2d takes four at a time)"
    return None


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the MVE path does not serve ``op`` (None: it does); ``op`` is int8."""
    if op.op == "depthwise_conv2d":
        return _depthwise(model, op, p)
    if op.op == "conv2d":
        return _pointwise(model, op, p)
    return f"{op.op} on Helium (tvmdev_cm's MVE path has none: CMSIS-NN's serves it)"


def scratch_bytes(buffer: str, p: dict[str, Any]) -> int:
    """The bytes of one operator's scratch on MVE: depthwise's plane; conv2d's folded
    channels' constants (20 bytes each: the folded bias, the multiplier and shifts)."""
    if buffer == "windows" and p["KH"] * p["KW"] > 1:
        return tvmdev_cm_mve_conv.scratch_bytes(p)
    return 20 * int(p["M"]) if buffer == "windows" else plane_bytes(p)


def precomputed(model: Model, op: Operator, p: dict[str, Any]) -> dict[str, CArray]:
    """The layout of a conv2d with more than one tap per channel (tvmdev_cm_mve_conv);
    nothing else is laid out on MVE."""
    if op.op == "conv2d" and p["KH"] * p["KW"] > 1:
        return tvmdev_cm_mve_conv.pack(model, op, p)
    return {}
