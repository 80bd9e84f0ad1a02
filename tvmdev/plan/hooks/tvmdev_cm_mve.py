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
5x5 and 3x3 planes (declined). keyword_spotting's 25x5x64 3x3 layers are a tie. The
across-channels path (:mod:`.tvmdev_cm_mvedw`) is asked first and takes 3x3, 5x5 and 7x7
layers (it runs 0.90x to 1.01x this path's instructions on them); this one keeps those
whose ring would exceed that path's scratch limit. Its
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
channels: 1.30 M against 0.72 M). A 1x1 over more input channels, or strided:
:mod:`.tvmdev_cm_mve_1x1` decides (conv1x1_s8_mve.c, four pixels in a tile times two
output channels a pass), which also takes 16 input channels to more than
:data:`PW_WIDE_OUTPUTS` output channels, where it runs fewer instructions than this kernel
(mps3_an547: 16 -> 24 over 20x20: 94,063 against 99,375; 24x24x16 -> 32: 170,906 against
186,688; a tie at 16 -> 16: 68,938 against 68,750; 40x40x16 -> 8: 173,406 against
151,219; below 16 channels it loses: 20x20x12 -> 48 193,438 against 192,500, 48x48x8 ->
16 438,656 against 400,375).

conv2d with more than one tap per input channel (3x3, a first convolution's 3x3x3 or
10x4x1): :mod:`.tvmdev_cm_mve_conv` decides, lays out and sizes it.

Everything else: declined; CMSIS-NN's Helium kernels serve it.
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from . import tvmdev_cm_mve_1x1, tvmdev_cm_mve_conv, tvmdev_cm_mvedw

SIZES = (3, 7)  # a 5x5 variant would not fit MCUNet VWW's code in the M55's ITCM
STRIDES = (1, 2)
# Where it wins (measured on mps3_an547 against CMSIS-NN v7, MCUNet VWW's and
# keyword_spotting's layers): its cost per channel is a fixed part (the plane's copy, the
# taps, the loop's set-up), so it needs enough outputs per channel, and enough taps per
# input element the plane copies (k^2 / stride^2).
MIN_OUTPUTS = 64
PW_CHANNELS_MAX = 16  # conv2d: input channels, one vector of int8
PW_WIDE_OUTPUTS = 16  # ... but 16 channels to more outputs than this: tvmdev_cm_mve_1x1's
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
    if p["pad_top"] != 0 or p["pad_left"] != 0:
        return "padding around a 1x1 filter (tvmdev_cm's MVE conv2d takes none)"
    if wide(p):
        return tvmdev_cm_mve_1x1.decline(model, op, p)
    if p["N"] * p["OH"] * p["OW"] < 4:
        return "fewer than 4 pixels (tvmdev_cm's MVE conv2d takes four at a time)"
    return None


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the MVE path does not serve ``op`` (None: it does); ``op`` is int8. A
    depthwise convolution goes across channels (:mod:`.tvmdev_cm_mvedw`) where that path
    takes it."""
    if op.op == "depthwise_conv2d":
        why = tvmdev_cm_mvedw.decline(model, op, p)
        return None if why is None else _depthwise(model, op, p)
    if op.op == "conv2d":
        return _pointwise(model, op, p)
    if op.op == "add":
        return tvmdev_cm_mvedw.decline_add(model, op, p)
    return f"{op.op} on Helium (tvmdev_cm's MVE path has none: CMSIS-NN's serves it)"


def wide(p: dict[str, Any]) -> bool:
    """Whether conv1x1_s8_mve.c serves the 1x1 conv2d ``p`` (as conv2d_s8_mve.c's
    dispatch decides: more than 16 input channels, 16 to more than 16 outputs, or a
    stride)."""
    return bool(p["C"] > PW_CHANNELS_MAX or (p["stride_h"], p["stride_w"]) != (1, 1) or (
        p["C"] == PW_CHANNELS_MAX and p["M"] > PW_WIDE_OUTPUTS))


def scratch_bytes(buffer: str, p: dict[str, Any]) -> int:
    """The bytes of one operator's scratch on MVE: depthwise's plane; conv2d's folded
    channels' constants (20 bytes each: the folded bias, the multiplier and shifts)."""
    if buffer == "windows" and p["KH"] * p["KW"] > 1:
        return tvmdev_cm_mve_conv.scratch_bytes(p)
    if buffer == "windows":
        return tvmdev_cm_mve_1x1.scratch_bytes(p) if wide(p) else 20 * int(p["M"])
    return tvmdev_cm_mvedw.scratch_bytes(p) if not plane_takes(p) else plane_bytes(p)


def plane_takes(p: dict[str, Any]) -> bool:
    """Whether the plane path serves a depthwise layer the MVE path takes (else it goes
    across channels, where that path takes it: the kernel's tvmk_cm_dw_mvec_takes). The
    filter's and bias's being constants were checked by both paths' rules alike."""
    if tvmdev_cm_mvedw.takes(p):
        return False
    outputs, reuse = p["OH"] * p["OW"], p["KH"] * p["KW"] / p["stride_h"] ** 2
    return bool(p["mult"] == 1 and p["dil_h"] == 1 and p["dil_w"] == 1
                and p["KH"] == p["KW"] and p["KH"] in SIZES
                and p["stride_h"] == p["stride_w"] and p["stride_h"] in STRIDES
                and outputs >= MIN_OUTPUTS and reuse >= MIN_REUSE
                and plane_bytes(p) <= PLANE_MAX)


def precomputed(model: Model, op: Operator, p: dict[str, Any]) -> dict[str, CArray]:
    """The layout of a conv2d with more than one tap per channel (tvmdev_cm_mve_conv);
    nothing else is laid out on MVE."""
    if op.op == "conv2d" and p["KH"] * p["KW"] > 1:
        return tvmdev_cm_mve_conv.pack(model, op, p)
    return {}
