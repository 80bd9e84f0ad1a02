"""tvmdev_cm's Helium (MVE) code path (``arch: mve``, the Cortex-M55): which operators it
takes there and the scratch each needs (runtime/kernels/tvmdev_cm/*_mve.c). The library's
hooks (:mod:`.tvmdev_cm`) hand an ``mve`` core's questions here.

depthwise_conv2d (int8): taken with a channel multiplier of 1, no dilation, a square 3x3,
5x5 or 7x7 filter, one stride (1 or 2) in both directions, a constant filter and bias, and
an int8 plane of at most :data:`PLANE_MAX` bytes. Measured on mps3_an547 (QEMU -icount),
CMSIS-NN v7's MVE depthwise kernels take 1.6 to 2.7 instructions per multiply-accumulate
on MCUNet VWW's and keyword_spotting's layers (their im2col copies each tap's channels);
this path takes a VLDRB and a VMLA per tap and four outputs. Its requantization is TFLM's
exactly (VQRDMULH and a rounding shift), so it needs no proof per layer. Its scratch is
the plane, then the channel's taps as int32.

conv2d and everything else: declined; CMSIS-NN's Helium kernels serve them.
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator

SIZES = (3, 5, 7)
STRIDES = (1, 2)
# Where it wins (measured on mps3_an547 against CMSIS-NN v7, MCUNet VWW's and
# keyword_spotting's layers): its cost per channel is a fixed part (the plane's copy, the
# taps, the loop's set-up), so it needs enough outputs per channel, and enough taps per
# input element the plane copies (k^2 / stride^2).
MIN_OUTPUTS = 64
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
        return f"a {p['KH']}x{p['KW']} filter (tvmdev_cm takes 3x3, 5x5 and 7x7)"
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


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the MVE path does not serve ``op`` (None: it does); ``op`` is int8."""
    if op.op == "depthwise_conv2d":
        return _depthwise(model, op, p)
    return f"{op.op} on Helium (tvmdev_cm's MVE path has none: CMSIS-NN's serves it)"


def scratch_bytes(buffer: str, p: dict[str, Any]) -> int:
    """The bytes of one operator's scratch on MVE."""
    return plane_bytes(p)
