"""Seeded one-op TFLite cases of TFLite's 16x8 scheme (int16 activations, symmetric per
tensor; int8 weights per output channel; int64 biases), one list per operator, each
merged into one .tflite (tests/test_tflite_int16.py holds them against TFLM's
interpreter through the numpy reference and through ``tvmdev run``).

Inputs span the whole int16 range. Scales are drawn so that outputs span most of it
(conv and fully_connected: from the accumulators' spread), with saturation now and then.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from s8_op_cases import BINARY_SHAPES
from tflite_build import Graph, Op, T, build
from tflite_slice_cases import _bounds

FLOAT32, INT32, INT64, INT16, INT8 = 0, 2, 4, 7, 9
ADD, AVERAGE_POOL_2D, CONV_2D, DEPTHWISE_CONV_2D, DEQUANTIZE = 0, 1, 3, 4, 6
CONCATENATION, FULLY_CONNECTED, MAX_POOL_2D, RESHAPE, TRANSPOSE, PADV2 = 2, 9, 17, 22, 39, 60
MUL, PAD, SOFTMAX, SUB, LEAKY_RELU, QUANTIZE = 18, 34, 25, 41, 98, 114
STRIDED_SLICE, TRANSPOSE_CONV = 45, 67
LOGISTIC, TANH, MEAN, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, HARD_SWISH = 14, 28, 40, 97, 23, 117
FUSED = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
NP = {FLOAT32: np.float32, INT32: np.int32, INT16: np.int16, INT8: np.int8}


class Model:
    """Operators added one by one, each with its own tensors: the .tflite and inputs."""

    def __init__(self) -> None:
        self.tensors: list[T] = []
        self.ops: list[Op] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.arrays: list[np.ndarray] = []
        self.labels: list[str] = []

    def tensor(self, t: T, values: np.ndarray | None = None) -> int:
        """Add ``t``; ``values``: a model input's (else ``t`` is a constant or output)."""
        self.tensors.append(replace(t, name=f"t{len(self.tensors)}"))
        if values is not None:
            self.inputs.append(len(self.tensors) - 1)
            self.arrays.append(values)
        return len(self.tensors) - 1

    def op(self, label: str, code: int, ins: list[int], out: T,
           options: tuple[str, dict[str, float]] | None = None) -> None:
        o = self.tensor(out)
        self.ops.append(Op(code, ins, [o], options))
        self.outputs.append(o)
        self.labels.append(label)

    def build(self) -> bytes:
        return build(Graph(self.tensors, self.ops, self.inputs, self.outputs))


def _scale(r: np.random.Generator, lo: float = 1e-4, hi: float = 1e-2) -> float:
    return float(np.float32(np.exp(r.uniform(np.log(lo), np.log(hi)))))


def _act(r: np.random.Generator, shape: list[int], zp: int = 0) -> tuple[T, np.ndarray]:
    """An int16 activation that is a model input, its scale random."""
    x = r.integers(-(1 << 15), 1 << 15, size=tuple(shape)).astype(np.int16)
    return T("", shape, type=INT16, quant=([_scale(r)], [zp])), x


def _out(scale: float, shape: list[int], zp: int = 0) -> T:
    return T("", shape, type=INT16, quant=([float(np.float32(scale))], [zp]))


def _weights(r: np.random.Generator, shape: list[int], axis: int) -> tuple[T, list[float]]:
    w = r.integers(-127, 128, size=tuple(shape)).astype(np.int8)
    scales = [_scale(r, 1e-3, 1e-1) for _ in range(shape[axis])]
    return T("", shape, w, type=INT8, quant=(scales, [0] * len(scales)), quant_axis=axis), scales


def _bias(r: np.random.Generator, n: int, s_in: float, s_w: list[float], int32: bool = False
          ) -> T:
    """An int64 bias, or an int32 one (TFLM's int32-accumulator variant of 16x8)."""
    b = r.integers(-(1 << 21), 1 << 21, n)
    return T("", [n], b.astype(np.int32 if int32 else np.int64), type=INT32 if int32 else INT64,
             quant=([s_in * s for s in s_w], [0] * n))


def _acc_scale(s_in: float, s_w: list[float], taps: int) -> float:
    """An output scale at which accumulators of ``taps`` products of random int16 and int8
    values (spread ~ 19000 * 73 * sqrt(taps)) span most of int16."""
    return s_in * float(np.median(s_w)) * 19000 * 73 * np.sqrt(taps) * 2.5 / 32767


def conv_cases(m: Model, r: np.random.Generator) -> None:
    """CONV_2D: strides, dilations, SAME and VALID, grouped, without bias or with an int64
    or int32 one, every fused activation."""
    geoms = [([1, 6, 7, 3], 4, 3, 3, 1, 1, 0), ([2, 5, 5, 4], 6, 2, 3, 2, 1, 1),
             ([1, 8, 9, 2], 5, 3, 2, 1, 2, 0), ([1, 7, 6, 6], 4, 3, 3, 2, 2, 1),
             ([1, 2, 166, 2], 8, 7, 7, 1, 1, 1), ([1, 4, 4, 8], 8, 1, 1, 1, 1, 0)]
    for i, (shape, co, kh, kw, stride, dil, same) in enumerate(geoms):
        for act in FUSED:
            groups = 2 if i == 3 else 1
            x, xv = _act(r, shape)
            w, s_w = _weights(r, [co, kh, kw, shape[3] // groups], 0)
            s_in = x.quant[0][0] if x.quant else 1.0
            ins = [m.tensor(x, xv), m.tensor(w)]
            if (i + len(act)) % 3:
                ins.append(m.tensor(_bias(r, co, s_in, s_w, int32=act == "RELU")))
            oh = _out_dim(shape[1], kh, stride, dil, same)
            ow = _out_dim(shape[2], kw, stride, dil, same)
            m.op(f"conv {shape} {co} {kh}x{kw} s{stride} d{dil} {act}", CONV_2D, ins,
                 _out(_acc_scale(s_in, s_w, kh * kw * shape[3] // groups),
                      [shape[0], oh, ow, co]),
                 ("Conv2DOptions", {"Padding": 1 - same, "StrideH": stride, "StrideW": stride,
                                    "DilationHFactor": dil, "DilationWFactor": dil,
                                    "FusedActivationFunction": FUSED[act]}))


def _out_dim(n: int, k: int, stride: int, dil: int, same: int) -> int:
    eff = (k - 1) * dil + 1
    return (n + stride - 1) // stride if same else (n - eff) // stride + 1


def depthwise_cases(m: Model, r: np.random.Generator) -> None:
    """DEPTHWISE_CONV_2D: depth multipliers 1 and 2, strides, dilations, padding."""
    for shape, mult, k, stride, dil, same in [([1, 6, 7, 3], 1, 3, 1, 1, 1),
                                              ([2, 5, 6, 2], 2, 3, 2, 1, 0),
                                              ([1, 9, 8, 4], 1, 2, 1, 2, 1),
                                              ([1, 5, 5, 3], 2, 5, 1, 1, 1)]:
        for act in ("NONE", "RELU6"):
            x, xv = _act(r, shape)
            c = shape[3] * mult
            w, s_w = _weights(r, [1, k, k, c], 3)
            s_in = x.quant[0][0] if x.quant else 1.0
            ins = [m.tensor(x, xv), m.tensor(w), m.tensor(_bias(r, c, s_in, s_w))]
            m.op(f"depthwise {shape} x{mult} {k} s{stride} d{dil} {act}", DEPTHWISE_CONV_2D,
                 ins, _out(_acc_scale(s_in, s_w, k * k),
                           [shape[0], _out_dim(shape[1], k, stride, dil, same),
                            _out_dim(shape[2], k, stride, dil, same), c]),
                 ("DepthwiseConv2DOptions", {
                     "Padding": 1 - same, "StrideH": stride, "StrideW": stride,
                     "DepthMultiplier": mult, "DilationHFactor": dil,
                     "DilationWFactor": dil, "FusedActivationFunction": FUSED[act]}))


def fc_cases(m: Model, r: np.random.Generator) -> None:
    """FULLY_CONNECTED: weights per channel and per tensor, an int64 or int32 bias."""
    for (batch, n_in, n_out), per_channel, act in itertools.product(
            [(1, 16, 8), (3, 40, 10), (2, 7, 33)], (True, False), ("NONE", "RELU")):
        x, xv = _act(r, [batch, n_in])
        w, s_w = _weights(r, [n_out, n_in], 0)
        if not per_channel:
            s_w = [s_w[0]]
            w = T("", w.shape, w.data, type=INT8, quant=(s_w, [0]))
        s_in = x.quant[0][0] if x.quant else 1.0
        ins = [m.tensor(x, xv), m.tensor(w)]
        ins.append(m.tensor(_bias(r, n_out, s_in, s_w * (n_out if not per_channel else 1),
                                  int32=act == "RELU")))
        m.op(f"fc {batch}x{n_in}->{n_out} {'channel' if per_channel else 'tensor'} {act}",
             FULLY_CONNECTED, ins, _out(_acc_scale(s_in, s_w, n_in), [batch, n_out]),
             ("FullyConnectedOptions", {"FusedActivationFunction": FUSED[act]}))


def binary_cases(code: int, name: str, options: str) -> Callable[[Model, np.random.Generator],
                                                               None]:
    def cases(m: Model, r: np.random.Generator) -> None:
        for i, ((sa, sb), act) in enumerate(itertools.product(BINARY_SHAPES, FUSED)):
            zps = (0, 0, 0) if code == MUL or i % 3 else tuple(
                int(v) for v in r.integers(-300, 300, 3))
            a, av = _act(r, sa, zps[0])
            b, bv = _act(r, sb, zps[1])
            sa_, sb_ = (a.quant[0][0] if a.quant else 1.0), (b.quant[0][0] if b.quant else 1.0)
            s_out = sa_ * sb_ * 30000 if code == MUL else max(sa_, sb_) * r.uniform(0.6, 2.5)
            ins = [m.tensor(a, av), m.tensor(b, None if i % 4 == 3 else bv)]
            if i % 4 == 3:  # B a constant
                m.tensors[ins[1]] = replace(m.tensors[ins[1]], data=bv)
            shape = list(np.broadcast_shapes(tuple(sa), tuple(sb)))
            m.op(f"{name} {sa} {sb} {act} zp {zps}", code, ins, _out(s_out, shape, zps[2]),
                 (options, {"FusedActivationFunction": FUSED[act]}))
    return cases


def minmax_cases(m: Model, r: np.random.Generator) -> None:
    """MAXIMUM and MINIMUM of int16, every broadcast pair, one quantization throughout."""
    for code, (sa, sb) in itertools.product((55, 57), BINARY_SHAPES):
        a, av = _act(r, sa)
        b = T("", sb, type=INT16, quant=a.quant)
        bv = r.integers(-(1 << 15), 1 << 15, size=tuple(sb)).astype(np.int16)
        shape = list(np.broadcast_shapes(tuple(sa), tuple(sb)))
        m.op(f"{'max' if code == 55 else 'min'} {sa} {sb}", code,
             [m.tensor(a, av), m.tensor(b, bv)], T("", shape, type=INT16, quant=a.quant))


def pad_cases(m: Model, r: np.random.Generator) -> None:
    """PAD of 1- to 4-D int16, the output quantized as the input."""
    for shape, pads in [([1, 2, 160, 2], [[0, 0], [0, 0], [3, 3], [0, 0]]),
                        ([3, 4], [[1, 2], [0, 3]]), ([5], [[2, 0]]),
                        ([2, 3, 4], [[1, 1], [2, 0], [0, 1]])]:
        x, xv = _act(r, shape)
        p = T("", [len(shape), 2], np.array(pads, np.int32), type=INT32)
        out = [d + a + b for d, (a, b) in zip(shape, pads, strict=True)]
        m.op(f"pad {shape} {pads}", PAD, [m.tensor(x, xv), m.tensor(p)],
             T("", out, type=INT16, quant=x.quant))


def padv2_cases(m: Model, r: np.random.Generator) -> None:
    """PADV2 with an int16 constant quantized as the output."""
    for shape, pads in [([1, 3, 4, 2], [[0, 0], [1, 2], [2, 1], [0, 0]]), ([6], [[3, 1]])]:
        x, xv = _act(r, shape)
        p = T("", [len(shape), 2], np.array(pads, np.int32), type=INT32)
        v = T("", [1], np.array([int(r.integers(-30000, 30000))], np.int16), type=INT16,
              quant=x.quant)
        out = [d + a + b for d, (a, b) in zip(shape, pads, strict=True)]
        m.op(f"padv2 {shape} {pads}", PADV2, [m.tensor(x, xv), m.tensor(p), m.tensor(v)],
             T("", out, type=INT16, quant=x.quant))


def pool_cases(m: Model, r: np.random.Generator) -> None:
    """AVERAGE_POOL_2D and MAX_POOL_2D: SAME and VALID, strides, every fused activation;
    the output quantized as the input (TFLM's requirement)."""
    for code, (shape, k, stride, same), act in itertools.product(
            (AVERAGE_POOL_2D, MAX_POOL_2D),
            [([1, 6, 7, 3], 3, 1, 1), ([2, 8, 8, 4], 2, 2, 0), ([1, 5, 9, 2], 3, 2, 1)],
            FUSED):
        x, xv = _act(r, shape, 0)
        oh, ow = (_out_dim(shape[1], k, stride, 1, same), _out_dim(shape[2], k, stride, 1,
                                                                  same))
        m.op(f"{'avg' if code == AVERAGE_POOL_2D else 'max'}pool {shape} {k} s{stride} {act}",
             code, [m.tensor(x, xv)], T("", [shape[0], oh, ow, shape[3]], type=INT16,
                                        quant=x.quant),
             ("Pool2DOptions", {"Padding": 1 - same, "StrideW": stride, "StrideH": stride,
                                "FilterWidth": k, "FilterHeight": k,
                                "FusedActivationFunction": FUSED[act]}))


def reshape_cases(m: Model, r: np.random.Generator) -> None:
    """RESHAPE of int16 (a copy, or a view in place)."""
    for shape, new in [([2, 3, 4], [6, 4]), ([1, 2, 160, 2], [320, 2]), ([5, 1], [5])]:
        x, xv = _act(r, shape)
        s = T("", [len(new)], np.array(new, np.int32), type=INT32)
        m.op(f"reshape {shape} {new}", RESHAPE, [m.tensor(x, xv), m.tensor(s)],
             T("", new, type=INT16, quant=x.quant), ("ReshapeOptions", {}))


def transpose_cases(m: Model, r: np.random.Generator) -> None:
    """TRANSPOSE of int16 by constant permutations (one that moves no data is a view)."""
    for shape, perm in [([2, 3, 4], [2, 0, 1]), ([1, 3, 5, 2], [0, 3, 1, 2]),
                        ([2, 3, 2, 3, 2], [4, 1, 3, 0, 2]), ([1, 4, 1, 3], [0, 2, 1, 3])]:
        x, xv = _act(r, shape)
        p = T("", [len(perm)], np.array(perm, np.int32), type=INT32)
        m.op(f"transpose {shape} {perm}", TRANSPOSE, [m.tensor(x, xv), m.tensor(p)],
             T("", [shape[i] for i in perm], type=INT16, quant=x.quant))


def concat_cases(m: Model, r: np.random.Generator) -> None:
    """CONCATENATION of 2 to 4 int16 tensors along each axis, one quantization throughout
    (the model's inputs and a constant now and then)."""
    for shapes, axis in [([[2, 3], [2, 5]], 1), ([[1, 2, 3], [4, 2, 3], [2, 2, 3]], 0),
                         ([[1, 4, 4, 2], [1, 4, 4, 3], [1, 4, 4, 1], [1, 4, 4, 2]], 3)]:
        q = ([_scale(r)], [0])
        ins = []
        for k, shape in enumerate(shapes):
            xv = r.integers(-(1 << 15), 1 << 15, size=tuple(shape)).astype(np.int16)
            const = k == 1 and axis == 0
            t = T("", shape, xv if const else None, type=INT16, quant=q)
            ins.append(m.tensor(t, None if const else xv))
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        m.op(f"concat {shapes} axis {axis}", CONCATENATION, ins,
             T("", out, type=INT16, quant=q), ("ConcatenationOptions", {"Axis": axis}))


def tconv_cases(m: Model, r: np.random.Generator) -> None:
    """TRANSPOSE_CONV: strides 1 to 3, SAME and VALID, weights per channel or per tensor,
    with an int64 or int16 bias or none, every fused activation."""
    geoms = [([1, 4, 4, 3], 5, 3, 3, 2, 0), ([1, 3, 5, 2], 4, 3, 2, 1, 0),
             ([2, 3, 3, 4], 3, 2, 2, 2, 1), ([1, 1, 5, 16], 8, 3, 4, 2, 0),
             ([1, 2, 3, 8], 4, 1, 1, 3, 1)]
    for i, (shape, co, kh, kw, stride, valid) in enumerate(geoms):
        for act in FUSED:
            x, xv = _act(r, shape)
            w, s_w = _weights(r, [co, kh, kw, shape[3]], 0)
            if (i + len(act)) % 4 == 0:  # per tensor
                s_w = s_w[:1] * co
                w = replace(w, quant=(s_w[:1], [0]))
            s_in = x.quant[0][0] if x.quant else 1.0
            out = [shape[0]] + [(n - 1) * stride + k if valid else n * stride
                                for n, k in ((shape[1], kh), (shape[2], kw))] + [co]
            ins = [m.tensor(T("", [4], np.array(out, np.int32), type=INT32)), m.tensor(w),
                   m.tensor(x, xv)]
            if (i + len(act)) % 3:
                b = _bias(r, co, s_in, s_w)
                if (i + len(act)) % 3 == 2 and b.data is not None:  # int16: TFLM widens it
                    b = replace(b, data=(b.data >> 6).astype(np.int16), type=INT16)
                ins.append(m.tensor(b))
            taps = max(1.0, kh * kw * shape[3] / stride ** 2)
            m.op(f"transpose_conv {shape} {co} {kh}x{kw} s{stride} v{valid} {act}",
                 TRANSPOSE_CONV, ins, _out(_acc_scale(s_in, s_w, int(taps)), out),
                 ("TransposeConvOptions", {"Padding": valid, "StrideH": stride,
                                           "StrideW": stride,
                                           "FusedActivationFunction": FUSED[act]}))


def slice_cases(m: Model, r: np.random.Generator) -> None:
    """STRIDED_SLICE of 1- to 4-D int16: random bounds, strides of either sign, masks and
    shrunk axes (tflite_slice_cases's), the output quantized as the input."""
    for shape in [[11], [6, 7], [3, 5, 8], [2, 4, 5, 6], [4, 3, 2, 8]] * 2:
        x, xv = _act(r, shape)
        out: tuple[int, ...] = ()
        while not out or 0 in out:  # tvmdev has no empty tensors
            begin, end, strides, bm, em, sm, index = _bounds(r, shape)
            out = np.zeros(shape)[index].shape
        consts = [m.tensor(T("", [len(shape)], np.array(v, np.int32), type=INT32))
                  for v in (begin, end, strides)]
        m.op(f"strided_slice {shape} {begin} {end} {strides} {bm} {em} {sm}", STRIDED_SLICE,
             [m.tensor(x, xv), *consts], T("", list(out), type=INT16, quant=x.quant),
             ("StridedSliceOptions", {"BeginMask": bm, "EndMask": em, "ShrinkAxisMask": sm}))


def leaky_relu_cases(m: Model, r: np.random.Generator) -> None:
    """LEAKY_RELU with alphas of either sign, scales either way."""
    for alpha in (0.3, 0.01, 0.2, -0.5, 1.5):
        x, xv = _act(r, [2, 5, 16])
        s_in = x.quant[0][0] if x.quant else 1.0
        m.op(f"leaky_relu {alpha}", LEAKY_RELU, [m.tensor(x, xv)],
             _out(s_in * r.uniform(0.7, 1.4), [2, 5, 16]), ("LeakyReluOptions",
                                                            {"Alpha": alpha}))


def quantize_cases(m: Model, r: np.random.Generator) -> None:
    """QUANTIZE float32 -> int16 and TFLM's requantizations with an int16 or int32 side;
    DEQUANTIZE int16 -> float32."""
    shape = [3, 50]
    for src, dst in [(FLOAT32, INT16), (INT16, INT8), (INT8, INT16), (INT16, INT16),
                     (INT16, INT32), (INT32, INT16)]:
        s_in = _scale(r, 1e-4, 1e-1)
        zp_in = 0 if src == FLOAT32 else int(r.integers(-20, 20))
        if src == FLOAT32:
            xv = r.uniform(-3000 * s_in, 3000 * s_in, shape).astype(np.float32) * 12
            x = T("", shape, type=FLOAT32)
        else:
            info = np.iinfo(NP[src])
            lim = (min(info.max, 1 << 17), max(info.min, -(1 << 17)))
            xv = r.integers(lim[1], lim[0], shape).astype(NP[src])
            x = T("", shape, type=src, quant=([s_in], [zp_in]))
        ratio = r.uniform(0.3, 3.0) if src != INT32 else r.uniform(2.0, 8.0)
        s_out = s_in * ratio if src != FLOAT32 else s_in
        out = T("", shape, type=dst, quant=([float(np.float32(s_out))],
                                            [0 if dst != INT8 else int(r.integers(-9, 9))]))
        m.op(f"quantize {src}->{dst}", QUANTIZE, [m.tensor(x, xv)], out)
    x, xv = _act(r, shape, 11)
    m.op("dequantize", DEQUANTIZE, [m.tensor(x, xv)], T("", shape, type=FLOAT32))


def softmax_cases(m: Model, r: np.random.Generator) -> None:
    """SOFTMAX of int8 into int16 (1/65536, -32768) and of int16 (1/32768, 0), rows of 1
    to 64, betas either side of 1, input scales from small to large."""
    for depth, beta, scale in [(2, 1.0, 0.02), (10, 1.0, 0.03), (40, 0.5, 0.02),
                               (7, 2.0, 0.3), (1, 1.0, 0.05), (16, 1.0, 0.01)]:
        shape = [8, depth]
        xv = r.integers(-128, 128, size=tuple(shape)).astype(np.int8)
        x = T("", shape, type=INT8, quant=([scale], [int(r.integers(-10, 10))]))
        m.op(f"softmax {depth} beta {beta} scale {scale}", SOFTMAX, [m.tensor(x, xv)],
             T("", shape, type=INT16, quant=([1.0 / 65536], [-32768])),
             ("SoftmaxOptions", {"Beta": beta}))
    for depth, beta, scale in [(2, 1.0, 1e-4), (10, 1.0, 3e-4), (40, 0.5, 2e-4),
                               (7, 2.0, 1e-3), (1, 1.0, 5e-4), (64, 1.0, 1e-4)]:
        shape = [6, depth]
        xv = r.integers(-(1 << 15), 1 << 15, size=tuple(shape)).astype(np.int16)
        x = T("", shape, type=INT16, quant=([scale], [0]))
        m.op(f"softmax int16 {depth} beta {beta} scale {scale}", SOFTMAX, [m.tensor(x, xv)],
             T("", shape, type=INT16, quant=([1.0 / 32768], [0])),
             ("SoftmaxOptions", {"Beta": beta}))


def lut_cases(code: int, name: str) -> Callable[[Model, np.random.Generator], None]:
    """LOGISTIC or TANH of int16: power-of-two input scales (TFLM's multiplier 3 << shift,
    TANH's doubling at 2^-11; one off by 4e-4, which CheckedLog2 still takes for one),
    others (its general multiplier and shift, from the smallest shift to 24), an output
    scale 2^-15 give or take what CheckedLog2 lets through."""
    def cases(m: Model, r: np.random.Generator) -> None:
        scales = [2.0 ** -12, 2.0 ** -11, 2.0 ** -13, 2.0 ** -10, 1e-7, 0.0003, 1.7,
                  2.0 ** -12 * 1.0004, *(_scale(r, 1e-4, 3e-3) for _ in range(3))]
        for k, scale in enumerate(scales):
            x, xv = _act(r, [3, 96])
            x = replace(x, quant=([float(np.float32(scale))], [0]))
            out = 2.0 ** -15 * (1.0003 if k == 5 else 1.0)
            m.op(f"{name} scale {scale}", code, [m.tensor(x, xv)], _out(out, [3, 96]))
    return cases


def mean_cases(m: Model, r: np.random.Generator) -> None:
    """MEAN of int16 over each kind of axes, keep_dims either way, any zero points; the
    output scale set so that the means span int16; one sum past int32 (TFLM's wraps)."""
    for shape, axes, keep in [([2, 5, 6, 3], [1, 2], 1), ([2, 5, 6, 3], [1, 2], 0),
                              ([4, 7, 5], [0], 1), ([3, 40], [-1], 0),
                              ([2, 3, 4, 5], [0, 1, 2, 3], 0), ([2, 6, 3], [2, 0], 1),
                              ([1, 280, 256, 1], [1, 2], 1)]:
        x, xv = _act(r, shape, int(r.integers(-300, 300)))
        if shape[1] == 280:
            xv = r.integers(31000, 1 << 15, size=tuple(shape)).astype(np.int16)
        n = int(np.prod([shape[a] for a in axes]))
        s_in = x.quant[0][0] if x.quant else 1.0
        out = [1 if d in [a % len(shape) for a in axes] else v for d, v in enumerate(shape)]
        if not keep:
            out = [v for d, v in enumerate(shape) if d not in [a % len(shape) for a in axes]]
        m.op(f"mean {shape} {axes} keep {keep}", MEAN,
             [m.tensor(x, xv), m.tensor(T("", [len(axes)], np.array(axes, np.int32),
                                          type=INT32))],
             _out(s_in * 0.6 / np.sqrt(n), out, int(r.integers(-300, 300))),
             ("ReducerOptions", {"KeepDims": keep}))


def resize_nearest_cases(m: Model, r: np.random.Generator) -> None:
    """RESIZE_NEAREST_NEIGHBOR of int16: up and down, align_corners, half_pixel_centers
    (the values copied, whatever the output's quantization)."""
    for shape, size, align, half in [([1, 3, 4, 2], [6, 8], 0, 0), ([2, 5, 7, 3], [3, 4], 0, 1),
                                     ([1, 4, 4, 5], [7, 9], 1, 0), ([1, 6, 3, 1], [4, 5], 0, 1),
                                     ([1, 2, 2, 4], [5, 3], 1, 0)]:
        x, xv = _act(r, shape)
        m.op(f"resize_nearest {shape} {size} align {align} half {half}",
             RESIZE_NEAREST_NEIGHBOR,
             [m.tensor(x, xv), m.tensor(T("", [2], np.array(size, np.int32), type=INT32))],
             T("", [shape[0], *size, shape[3]], type=INT16, quant=x.quant),
             ("ResizeNearestNeighborOptions", {"AlignCorners": align,
                                               "HalfPixelCenters": half}))


CASES: dict[str, Callable[[Model, np.random.Generator], None]] = {
    "conv2d": conv_cases, "depthwise_conv2d": depthwise_cases, "fully_connected": fc_cases,
    "add": binary_cases(ADD, "add", "AddOptions"),
    "sub": binary_cases(SUB, "sub", "SubOptions"),
    "mul": binary_cases(MUL, "mul", "MulOptions"),
    "pad": pad_cases, "leaky_relu": leaky_relu_cases, "quantize": quantize_cases,
    "softmax": softmax_cases, "padv2": padv2_cases, "pool": pool_cases,
    "reshape": reshape_cases, "transpose": transpose_cases, "concat": concat_cases,
    "minmax": minmax_cases, "transpose_conv": tconv_cases, "strided_slice": slice_cases,
    "logistic": lut_cases(LOGISTIC, "logistic"), "tanh": lut_cases(TANH, "tanh"),
    "mean": mean_cases, "resize_nearest": resize_nearest_cases,
}


def model(op: str, seed: int = 16) -> Model:
    """The merged one-op cases of ``op``."""
    m = Model()
    CASES[op](m, np.random.default_rng(seed + list(CASES).index(op)))
    return m
