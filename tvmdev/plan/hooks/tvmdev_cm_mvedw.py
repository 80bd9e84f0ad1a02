"""tvmdev_cm's Helium depthwise convolution across channels (``arch: mve``, the Cortex-M55;
runtime/kernels/tvmdev_cm/depthwise_conv2d_s8_mvec.c): which layers it takes and its
scratch. :mod:`.tvmdev_cm_mve` asks here first; a layer this path declines goes on to the
per-channel plane path there, then CMSIS-NN. ADD on Helium is decided here too
(:func:`decline_add`).

Taken: a 3x3, 5x5 or 7x7 filter, one stride (1 or 2) in both directions, no dilation, a
channel multiplier of 1 or a single input channel with a multiplier of at most
:data:`MULT_MAX` (copied into the ring repeated), at least :data:`MIN_WORK` taps x outputs
per channel, a constant filter and bias, a scratch of at most :data:`SCRATCH_MAX` bytes.
The kernel's ``tvmk_cm_dw_mvec_takes`` is the same rule.

Eight output channels a vector (VLDRB.S16, VMULLB/VMULLT into int32), two output pixels
a filter load, the ring's pixels 8 bytes so every load has a constant offset: about 0.7
instructions per multiply-accumulate and 3 per output for the requantization, with no
cost per channel beyond its share of the layout. Measured on mps3_an547 (QEMU -icount),
layer by layer in the whole models (tvmdev run's TRACE hook), against CMSIS-NN v7's MVE
kernel: person_detect's 96x96x1 multiplier-8 first layer 0.34x (1,000,344 instructions
to 337,719), visual_wake_words' 48x48x16 stride 2 0.57x, 24x24x32 stride 2 0.78x,
6x6x128 0.87x, MCUNet VWW's 40-column stride-2 bands of 48 channels 0.84x, its 10x10x120
5x5 0.70x, 5x5x240 7x7 0.80x, 10x10x144 7x7 stride 2 0.90x, 3x3x288 7x7 0.95x; but 3x3
filters over 5 x 5 or 3 x 3 outputs 1.04x to 1.36x and 5x5 at stride 2 over 3 x 3 1.23x
(the pairs of outputs and the layout cost more there): below :data:`MIN_WORK` they stay
on CMSIS-NN. Against the plane path: 0.90x to 0.97x on keyword_spotting's 25x5x64,
48x48x8, 12x12x64 and 10x10x144, 0.94x on 20x20x48 7x7 stride 2, 0.99x to 1.01x on
40x40x16, 24x24x32 and 20x20x48 3x3; the plane path keeps what would need a larger
scratch. Requantization is TFLM's exactly (VQRDMULH, the fix-up, VRSHL: the plane path's,
per lane; tests/test_tvmdev_cm_mve.py checks it at the edges).
"""

from __future__ import annotations

from typing import Any

from ...model.graph import Model, Operator

SIZES = (3, 5, 7)
MIN_WORK = 300  # taps x outputs per channel: on less, CMSIS-NN's runs fewer instructions
STRIDES = (1, 2)
MULT_MAX = 16  # a single input channel's multiplier: the ring's pixel is one vector
SCRATCH_MAX = 48 * 1024
BLOCK_BYTES = 160  # per 8 output channels: folded biases and requantization vectors


def scratch_bytes(p: dict[str, Any]) -> int:
    """Per block of 8 output channels: its folded biases and requantization vectors, and
    its filter (k x k taps of 8 bytes); then the ring of k input rows, each per block the
    columns two outputs at a time read, 8 bytes a pixel."""
    s, k = p["stride_h"], p["KH"]
    blocks = -(-(p["C"] * p["mult"]) // 8)
    cols = ((p["OW"] + 1) // 2 * 2 - 1) * s + k
    return int(blocks * (BLOCK_BYTES + 8 * k * k) + k * blocks * cols * 8)


def shape_declined(p: dict[str, Any]) -> str | None:
    """Why the layer's shape is not this path's (None: it is); the kernel's
    ``tvmk_cm_dw_mvec_takes`` is the same rule, constants and all."""
    if not (p["mult"] == 1 or (p["C"] == 1 and p["mult"] <= MULT_MAX)):
        return (f"a channel multiplier of {p['mult']} on {p['C']} channels (tvmdev_cm's "
                f"MVE depthwise takes 1, or at most {MULT_MAX} on one channel)")
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    if p["KH"] != p["KW"] or p["KH"] not in SIZES:
        return (f"a {p['KH']}x{p['KW']} filter (tvmdev_cm's MVE depthwise takes 3x3, 5x5 "
                "and 7x7)")
    if p["stride_h"] != p["stride_w"] or p["stride_h"] not in STRIDES:
        return f"strides {p['stride_h']}x{p['stride_w']} (tvmdev_cm takes 1x1 and 2x2)"
    work = p["KH"] * p["KW"] * p["OH"] * p["OW"]
    if work < MIN_WORK:
        return (f"{p['OH'] * p['OW']} outputs per channel of {p['KH'] * p['KW']} taps "
                f"(tvmdev_cm's MVE depthwise takes at least {MIN_WORK} taps x outputs: "
                "CMSIS-NN's runs fewer instructions on fewer)")
    if scratch_bytes(p) > SCRATCH_MAX:
        return (f"a scratch of {scratch_bytes(p)} bytes (tvmdev_cm's MVE depthwise takes "
                f"at most {SCRATCH_MAX})")
    return None


def takes(p: dict[str, Any]) -> bool:
    """Whether the layer's shape is this path's."""
    return shape_declined(p) is None


def decline(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why the across-channels path does not serve ``op`` (None: it does)."""
    if any(t not in model.constants for t in op.inputs[1:] if t is not None):
        return "a filter or bias computed at run time (tvmdev_cm lays them out ahead)"
    return shape_declined(p)


def decline_add(model: Model, op: Operator, p: dict[str, Any]) -> str | None:
    """Why tvmdev_cm's Helium ADD (runtime/kernels/tvmdev_cm/add_s8_mve.c) does not serve
    ``op`` (int8; None: it does): two operands of the output's shape (as CMSIS-NN's) and
    TFLM's shifts (none positive: its scales are at most 1/2, and a left shift of at most
    20). Four elements a vector, 25 instructions (TFLM's arithmetic exactly); CMSIS-NN
    v7's MVE kernel ran 13.8 instructions an element on MCUNet VWW's 20x20x16 ADD."""
    out = model.tensors[op.outputs[0]].shape
    if any(model.tensors[t].shape != out for t in op.inputs if t is not None):
        return "a broadcast (tvmdev_cm's ADD takes operands of the output's shape)"
    if not (0 <= p["left_shift"] <= 20 and max(p["a_shift"], p["b_shift"],
                                               p["out_shift"]) <= 0):
        return "a positive shift (tvmdev_cm's ADD takes TFLM's: none)"
    return None


def no_dsp(model: Model, op: Operator, p: dict[str, Any], arch: str,
           flash: int | None = None) -> str | None:
    """tvmdev_cm's DSP path has no ADD (CMSIS-NN's serves it)."""
    return f"{op.op} on the DSP path (tvmdev_cm's ADD is Helium's only)"
