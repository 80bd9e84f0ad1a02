"""One-operator int8 DEPTHWISE_CONV_2D and CONV_2D models for tvmdev's own Cortex-M kernels
(runtime/kernels/tvmdev_cm, tests/test_tvmdev_cm.py), merged into one .tflite whose
outputs TFLM's interpreter computes (tests/tflm_ref.py).

The edges the kernel's layout and arithmetic meet: every filter size and stride it takes,
SAME and VALID (with a last window that stops short of the input's end), odd heights,
widths and channel counts, a single pixel under a 7x7 filter, per-channel scales from
2^-20 to above 1 (negative and positive shifts), taps of -127 and 127, zero points at both
ends of the int8 range, biases up to 2^20 in magnitude, every fused activation. Inputs
span the whole int8 range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_build import Graph, Op, T, build

INT8, INT32, CONV_2D, DEPTHWISE_CONV_2D = 9, 2, 3, 4
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


@dataclass(frozen=True)
class Dw:
    """One depthwise convolution: input N x H x W x C, a k x k filter at ``stride``."""

    h: int
    w: int
    c: int
    k: int
    stride: int
    same: bool = True
    act: str = "NONE"
    zp_in: int = 3
    zp_out: int = -5
    extreme: bool = False  # scales and taps at the edges
    n: int = 1
    mult: int = 1
    conv: int = 0  # a CONV_2D with this many output channels (c: its input channels)
    top: float = 2  # extreme: the largest effective scale, 2^top
    # taps of -3 to 3, small biases, effective scales 2^-4 to 2^-1.2 (right shifts 1 to 4):
    # outputs inside the clamp, many of them rounding ties (negative ones among them)
    small: bool = False
    kw: int = 0  # the filter's width when it is not k (a CONV_2D's KH x KW: k x kw)


def out_size(size: int, k: int, stride: int, same: bool) -> int:
    return -(-size // stride) if same else (size - k) // stride + 1


CASES = [
    Dw(9, 7, 5, 3, 1), Dw(8, 8, 4, 3, 2, act="RELU6"), Dw(10, 9, 3, 3, 2, same=False),
    Dw(7, 11, 6, 5, 1, act="RELU"), Dw(11, 10, 3, 5, 2, same=False, zp_in=-128),
    Dw(12, 12, 8, 5, 2, extreme=True), Dw(13, 9, 2, 7, 1, zp_in=127, zp_out=127),
    Dw(14, 15, 3, 7, 2, act="RELU_N1_TO_1"), Dw(1, 1, 4, 7, 1), Dw(2, 3, 1, 7, 2),
    Dw(9, 9, 17, 7, 1, same=False, extreme=True, zp_out=-128), Dw(6, 5, 7, 3, 1, n=2),
    Dw(16, 16, 5, 5, 1, extreme=True, act="RELU"),
    # declined by tvmdev_cm (CMSIS-NN or the portable kernel takes them): a channel
    # multiplier of 2, a 1x1 filter, stride 3
    Dw(6, 6, 3, 3, 1, mult=2), Dw(5, 5, 4, 1, 1), Dw(9, 9, 3, 3, 3),
]
# CONV_2D with few taps (a first convolution): 3x3 over 3 channels at stride 2, SAME and
# VALID, an odd count of output channels and of columns, 5x5 over one channel, 2x2 over
# 2, extreme scales, a 1x1 filter (conv1x1_s8.c); declined: 36 taps (3x3 over 4 channels).
CONV_CASES = [
    Dw(16, 16, 3, 3, 2, conv=16, act="RELU6"), Dw(11, 9, 3, 3, 2, same=False, conv=5),
    Dw(9, 7, 3, 3, 1, conv=7, zp_in=-128, extreme=True), Dw(8, 9, 1, 5, 1, conv=4),
    Dw(7, 6, 2, 2, 2, conv=3, act="RELU", zp_in=127, zp_out=127), Dw(6, 6, 3, 3, 2, conv=8, n=2),
    Dw(6, 6, 8, 1, 1, conv=4), Dw(6, 6, 4, 3, 1, conv=4),
]

# CONV_2D with more than 32 taps (tvmdev_cm's conv_general_s8.c: a 1x1 over each window):
# 3x3 over 16 to 32 channels at stride 1 and 2, SAME and VALID; rows of taps that end
# inside a quad (5, 6 and 9 channels, 5x5 over 2: the window gathered first); a 2x2 and a
# 10x4 filter (keyword_spotting's first, stride 2: SAME pads one side more); a 7x7 filter
# wider than its 3x3 input; odd output channel counts; a batch of 2; zero points at both
# ends; extreme scales (shifts -19 to 3: right shifts of 0 among them) with taps of +-127;
# small taps and right shifts of 1 to 4 (rounding ties); every fused activation.
GEN_CASES = [
    Dw(10, 9, 16, 3, 1, conv=16, act="RELU6"), Dw(9, 9, 16, 3, 2, conv=7),
    Dw(11, 10, 8, 3, 2, same=False, conv=12, zp_in=-128),
    Dw(7, 8, 5, 3, 1, conv=6, act="RELU"),
    Dw(8, 7, 6, 3, 1, conv=9, extreme=True, zp_out=-128),
    Dw(9, 8, 2, 5, 1, conv=5, zp_in=127, zp_out=127),
    Dw(6, 7, 9, 2, 2, conv=4, act="RELU_N1_TO_1"), Dw(6, 6, 4, 3, 1, conv=4),
    Dw(5, 5, 32, 3, 1, conv=20, small=True),
    Dw(6, 5, 12, 3, 1, conv=8, n=2, extreme=True, top=-1.5),
    Dw(3, 3, 16, 7, 1, conv=4), Dw(13, 6, 1, 10, 2, kw=4, conv=8, zp_in=-128),
    Dw(7, 7, 4, 3, 1, conv=10, small=True, act="RELU", zp_in=-128, zp_out=-20),
    Dw(5, 6, 8, 3, 1, conv=12, extreme=True),
]

# CONV_2D with a 1x1 filter (tvmdev_cm's conv1x1_s8.c): input channel counts that are not
# multiples of 4 (5, 3, 2, 33: an odd count of quads), output channel counts that are not
# (7, 1, 10, 18, 6, 2), odd pixel counts, stride 2, a batch of 2, a single pixel (a fully
# connected layer as a convolution), zero points at both ends, per-channel scales from
# 2^-20 to 2^-1.5 (every shift negative) with taps of +-127 and biases up to 2^20, every
# fused activation; shifts from -19 to 3 (scales to 4: right shifts of 0 among them);
# small taps and right shifts of 1 to 4, so that many outputs are rounding ties.
PW_CASES = [
    Dw(5, 7, 16, 1, 1, conv=24, act="RELU6"), Dw(3, 5, 5, 1, 1, conv=7, zp_in=-128),
    Dw(4, 3, 3, 1, 1, conv=1, zp_in=127, zp_out=127),
    Dw(7, 7, 12, 1, 2, same=False, conv=10, act="RELU"),
    Dw(3, 3, 33, 1, 1, conv=18, extreme=True, top=-1.5, zp_out=-128),
    Dw(2, 3, 8, 1, 1, conv=6, n=2), Dw(1, 1, 64, 1, 1, conv=2, act="RELU_N1_TO_1"),
    Dw(5, 5, 2, 1, 1, conv=4, extreme=True, top=-1.5, zp_in=-128),
    Dw(9, 9, 40, 1, 2, conv=20, zp_in=-128, zp_out=127, act="RELU"),
    Dw(4, 4, 8, 1, 1, conv=8, extreme=True),
    Dw(6, 5, 8, 1, 1, conv=12, small=True),
    Dw(5, 5, 7, 1, 1, conv=9, small=True, act="RELU", zp_in=-128, zp_out=-20),
]


def _scales(r: np.random.Generator, d: Dw, s_in: float, s_out: float) -> list[float]:
    ch = d.conv or d.c * d.mult
    if d.small:
        return [float(np.float32(v * s_out / s_in)) for v in np.exp2(np.linspace(-4, -1.2, ch))]
    if not d.extreme:
        return [float(np.float32(v)) for v in r.uniform(0.3, 2.0, ch) / 127 / 4]
    # the effective scale s_in * s_w / s_out from 2^-20 to 4 (shifts -19 to 3)
    ratios = np.exp2(np.linspace(-20, d.top, ch))
    return [float(np.float32(v * s_out / s_in)) for v in ratios]


def _tensors(r: np.random.Generator, d: Dw, i: int) -> tuple[list[T], np.ndarray]:
    s_in, s_out = 0.03, 0.05
    ch = d.conv or d.c * d.mult
    kw = d.kw or d.k
    oh, ow = out_size(d.h, d.k, d.stride, d.same), out_size(d.w, kw, d.stride, d.same)
    s_w = _scales(r, d, s_in, s_out)
    shape = [ch, d.k, kw, d.c] if d.conv else [1, d.k, kw, ch]
    w = r.integers(-3, 4, shape) if d.small else r.integers(-127, 128, shape)
    if d.extreme:
        w[..., ::2] = 127 * np.sign(w[..., ::2] + 0.5).astype(np.int64)
    b = r.integers(-2**20 if d.extreme else -3000, 2**20 if d.extreme else 3000, ch)
    if d.small:
        b = r.integers(-50, 51, ch)
    x = r.integers(-128, 128, (d.n, d.h, d.w, d.c)).astype(np.int8)
    ts = [T(f"x{i}", [d.n, d.h, d.w, d.c], type=INT8, quant=([s_in], [d.zp_in])),
          T(f"w{i}", shape, w.astype(np.int8), type=INT8,
            quant=(s_w, [0] * ch), quant_axis=0 if d.conv else 3),
          T(f"b{i}", [ch], b.astype(np.int32), type=INT32,
            quant=([s_in * s for s in s_w], [0] * ch)),
          T(f"y{i}", [d.n, oh, ow, ch], type=INT8, quant=([s_out], [d.zp_out]))]
    return ts, x


def merged(cases: list[Dw] = CASES, seed: int = 25) -> tuple[bytes, list[np.ndarray]]:
    """One .tflite with every case's operator, and its inputs in order."""
    r = np.random.default_rng(seed)
    tensors: list[T] = []
    ops, inputs, outputs, arrays = [], [], [], []
    for i, d in enumerate(cases):
        ts, x = _tensors(r, d, i)
        base = len(tensors)
        tensors += ts
        common = {"Padding": 0 if d.same else 1, "StrideW": d.stride, "StrideH": d.stride,
                  "FusedActivationFunction": ACTIVATIONS[d.act]}
        opts = (("Conv2DOptions", common) if d.conv else
                ("DepthwiseConv2DOptions", {**common, "DepthMultiplier": d.mult}))
        code = CONV_2D if d.conv else DEPTHWISE_CONV_2D
        ops.append(Op(code, [base, base + 1, base + 2], [base + 3], opts))
        inputs.append(base)
        outputs.append(base + 3)
        arrays.append(x)
    return build(Graph(tensors, ops, inputs, outputs)), arrays

# tvmdev_cm's Helium path (mps3_an547, tvmdev/plan/hooks/tvmdev_cm_mve.py): the depthwise
# layers it takes (3x3 and 7x7, at least 64 outputs per channel, k^2 / stride^2 >= 4) over
# every filter size and stride, SAME and VALID, a last pass of eight outputs full (72 =
# 9 x 8) and partial, odd channel counts, two images, extreme scales and zero points,
# every activation; then the 1x1 convolutions its one-vector kernel takes (1, 2, 5, 8,
# 13, 16 input channels; tests/test_tvmdev_cm_mve_1x1.py covers conv1x1_s8_mve.c's);
# pixel counts that are and are not a multiple of 4; two images; 13,824
# outputs, enough that the rounding meets ties of negative values); then the general
# convolutions it takes (MVE_CONV_CASES); then what it declines: 25 outputs per channel,
# 3x3 at stride 2, a 5x5 filter (those two go across channels: MVEDW_CASES), a 1x1 over 9
# pixels (three tiles of 4), 4,104 taps per output channel.
#
# MVE_CONV_CASES (conv2d_gen_s8_mve.c): 3x3 over 3 channels at stride 2 (a MobileNet's first
# convolution, odd sizes), keyword_spotting's 10x4 over one channel at stride 2, one input
# channel VALID, 20 (a window of 180 taps: a last chunk of 4) with extreme scales (left
# and right shifts) and 7 output channels (a last group of 3), 16 at stride 2 VALID with
# zero points at the top, 32 over 25 pixels (a last pair of one), 5x5 over two channels in
# two images and 2x2 at stride 2 with small taps and right shifts (rounding ties, negative
# ones among them), a 1x3 filter, one output channel, 64 channels (36 chunks: an even
# count), every activation.
MVE_CONV_CASES = [
    Dw(6, 6, 3, 3, 1, conv=4), Dw(17, 15, 3, 3, 2, conv=8, act="RELU6"),
    Dw(21, 10, 1, 10, 2, conv=12, kw=4, act="RELU"), Dw(9, 9, 1, 3, 1, same=False, conv=5),
    Dw(7, 6, 20, 3, 1, conv=7, extreme=True, zp_in=-128),
    Dw(10, 9, 16, 3, 2, same=False, conv=16, zp_in=127, zp_out=127),
    Dw(5, 5, 32, 3, 1, conv=6, act="RELU_N1_TO_1"), Dw(8, 7, 2, 5, 1, conv=9, n=2, small=True),
    Dw(8, 8, 4, 2, 2, conv=4, small=True, act="RELU", zp_in=-128, zp_out=-20),
    Dw(6, 7, 5, 1, 1, conv=3, kw=3), Dw(5, 4, 8, 3, 1, conv=1, extreme=True, top=-1.5),
    Dw(4, 4, 64, 3, 1, conv=8, extreme=True, zp_out=-128),
]
MVE_CASES = [
    Dw(9, 8, 5, 3, 1), Dw(12, 11, 3, 3, 1, same=False, act="RELU6"),
    Dw(17, 16, 4, 7, 1, act="RELU", zp_in=-128), Dw(22, 21, 3, 7, 2, same=False, extreme=True),
    Dw(16, 16, 6, 7, 1, zp_in=127, zp_out=127), Dw(21, 18, 3, 7, 2, act="RELU_N1_TO_1"),
    Dw(8, 8, 17, 7, 1, extreme=True, zp_out=-128), Dw(9, 9, 7, 3, 1, n=2),
    Dw(13, 13, 5, 3, 1, extreme=True, act="RELU"), Dw(12, 12, 16, 3, 1, extreme=True),
    Dw(7, 5, 8, 1, 1, conv=12), Dw(5, 3, 16, 1, 1, conv=7, extreme=True, act="RELU6"),
    Dw(3, 3, 1, 1, 1, conv=5, zp_in=-128, zp_out=127), Dw(4, 5, 5, 1, 1, conv=33, n=2),
    Dw(6, 6, 16, 1, 1, conv=16, zp_in=127, act="RELU_N1_TO_1"),
    Dw(9, 9, 13, 1, 1, conv=48, extreme=True, zp_in=-7),
    Dw(24, 24, 2, 1, 1, conv=24),
    *MVE_CONV_CASES,
    Dw(5, 5, 8, 3, 1), Dw(16, 16, 4, 3, 2), Dw(12, 12, 4, 5, 1),
    Dw(3, 3, 17, 1, 1, conv=8), Dw(3, 3, 456, 3, 1, conv=2),
]
MVE_TAKEN = 17 + len(MVE_CONV_CASES)

# DEPTHWISE_CONV_2D on tvmdev_cm's Helium path across channels
# (depthwise_conv2d_s8_mvec.c): 3x3 layers of at least 36 outputs per channel, 5x5 and
# 7x7 ones of at least 300 taps x outputs (small planes: the window past the input on
# every side). Channel counts not multiples of 8 (5, 9, 11, 13, 17, 20), 40 channels, a
# single input channel with a multiplier (3, 8: person_detect's first layer, 16),
# strides 1 and 2, SAME and VALID, a batch of 2, odd widths (the last pair's second output
# not stored), extreme scales (left shifts to 3) and taps, small taps with rounding ties,
# zero points at both ends, every activation; then one whose ring would exceed the
# scratch's limit (the plane path takes it) and three declined by both (16 outputs of
# 3x3, a 5x5 filter on 9 outputs, a multiplier of 2 on 3 channels).
MVEDW_CASES = [
    Dw(6, 6, 24, 3, 1), Dw(8, 7, 20, 3, 1, act="RELU6"),
    Dw(7, 9, 13, 3, 1, extreme=True, zp_out=-128), Dw(13, 13, 16, 3, 2, zp_in=-128),
    Dw(15, 14, 11, 3, 2, same=False, extreme=True), Dw(13, 12, 1, 3, 2, mult=8, act="RELU"),
    Dw(7, 7, 1, 3, 1, mult=3, zp_in=127), Dw(6, 7, 8, 3, 1, n=2, small=True),
    Dw(6, 6, 40, 3, 1, small=True, act="RELU", zp_in=-128, zp_out=-20),
    Dw(6, 6, 9, 3, 1, extreme=True), Dw(12, 13, 5, 3, 2, act="RELU_N1_TO_1", zp_in=127,
                                       zp_out=127),
    Dw(14, 13, 1, 3, 2, mult=16, same=False),
    Dw(5, 5, 20, 5, 1, act="RELU6"), Dw(5, 5, 13, 7, 1, extreme=True, zp_out=-128),
    Dw(14, 13, 11, 5, 2, same=False, extreme=True), Dw(3, 3, 17, 7, 1, zp_in=127),
    Dw(9, 8, 5, 7, 2, small=True, act="RELU"), Dw(7, 6, 8, 7, 1, n=2),
    Dw(4, 120, 64, 7, 1),
    Dw(4, 4, 33, 3, 1), Dw(6, 6, 8, 5, 2), Dw(6, 6, 3, 3, 1, mult=2),
]
MVEDW_CHANNELS = 18  # the first 18 go across channels, the next to the plane path
