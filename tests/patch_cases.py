"""A small CNN, as the early stages of MobileNet and MCUNet are, to run patch by patch
(tvmdev/plan/patch.py; tests/test_patch.py): a strided convolution, depthwise
convolutions of 3x3, 5x5 and 7x7 with stride 1 and 2 and SAME padding, 1x1
convolutions, an inverted-residual ADD, a max and an average pool, in int8 or float32.
Weights are seeded, per channel for int8; quantization follows TFLite's rules (an ADD's
inputs and output have their own; a pool's input and output share one)."""

from __future__ import annotations

import numpy as np
from tflite_build import Graph, Op, T, build

INT8, INT32, FLOAT32 = 9, 2, 0
CONV, DW, ADD, MAXPOOL, AVGPOOL = 3, 4, 0, 17, 1
RELU6 = 3
X_SHAPE = [1, 23, 20, 3]  # odd rows: bands of unequal sizes, windows past the last row


class _Builder:
    def __init__(self, dtype: str, seed: int) -> None:
        self.dtype = dtype
        self.r = np.random.default_rng(seed)
        self.ts = [T("x", X_SHAPE, type=self.type, quant=self.quant(0.05, -5))]
        self.ops: list[Op] = []

    @property
    def type(self) -> int:
        return INT8 if self.dtype == "int8" else FLOAT32

    def quant(self, scale: float, zp: int) -> tuple[list[float], list[int]] | None:
        return ([scale], [zp]) if self.dtype == "int8" else None

    def tensor(self, name: str, shape: list[int], data: np.ndarray | None = None,
               type: int | None = None, quant: tuple[list[float], list[int]] | None = None,
               axis: int = 0) -> int:
        self.ts.append(T(name, shape, data, type=self.type if type is None else type,
                         quant=quant, quant_axis=axis))
        return len(self.ts) - 1

    def conv(self, name: str, src: int, c_out: int, k: int, stride: int, dw: bool = False,
             act: int = 0) -> int:
        shape = self.ts[src].shape
        c_in = shape[3]
        oh, ow = -(-shape[1] // stride), -(-shape[2] // stride)
        wshape = [1, k, k, c_out] if dw else [c_out, k, k, c_in]
        in_scale = (self.ts[src].quant or ([1.0], [0]))[0][0]
        if self.dtype == "int8":
            ws = [float(s) for s in self.r.uniform(0.5, 2.0, c_out) / 127 / 2]
            w = self.tensor(f"{name}_w", wshape, self.r.integers(-127, 128, wshape).astype(
                np.int8), INT8, (ws, [0] * c_out), 3 if dw else 0)
            b = self.tensor(f"{name}_b", [c_out], self.r.integers(-2000, 2000, c_out).astype(
                np.int32), INT32, ([in_scale * s for s in ws], [0] * c_out))
        else:
            w = self.tensor(f"{name}_w", wshape, self.r.uniform(-0.5, 0.5, wshape).astype(
                np.float32))
            b = self.tensor(f"{name}_b", [c_out], self.r.uniform(-1, 1, c_out).astype(
                np.float32))
        out = self.tensor(name, [1, oh, ow, c_out],
                          quant=self.quant(float(self.r.uniform(0.2, 0.5)),
                                           int(self.r.integers(-20, 20))))
        opts: dict[str, float] = {"Padding": 0, "StrideH": stride, "StrideW": stride,
                                  "FusedActivationFunction": act}
        if dw:
            opts["DepthMultiplier"] = 1
        self.ops.append(Op(DW if dw else CONV, [src, w, b], [out],
                           ("DepthwiseConv2DOptions" if dw else "Conv2DOptions", opts)))
        return out

    def add(self, name: str, a: int, b: int) -> int:
        out = self.tensor(name, self.ts[a].shape, quant=self.quant(0.4, 2))
        self.ops.append(Op(ADD, [a, b], [out], ("AddOptions", {"FusedActivationFunction": 0})))
        return out

    def pool(self, name: str, code: int, src: int, k: int, stride: int) -> int:
        shape = self.ts[src].shape
        out = self.tensor(name, [1, -(-shape[1] // stride), -(-shape[2] // stride), shape[3]],
                          quant=self.ts[src].quant)
        self.ops.append(Op(code, [src], [out], ("Pool2DOptions", {
            "Padding": 0, "StrideH": stride, "StrideW": stride, "FilterHeight": k,
            "FilterWidth": k, "FusedActivationFunction": 0})))
        return out


def model(dtype: str, seed: int = 5) -> bytes:
    """The CNN in ``dtype`` (int8 or float32)."""
    g = _Builder(dtype, seed)
    x = g.conv("stem", 0, 8, 3, 2, act=RELU6)                   # 12x10x8
    d1 = g.conv("dw3", x, 8, 3, 1, dw=True, act=RELU6)
    p1 = g.conv("pw1", d1, 8, 1, 1)
    r1 = g.add("res1", p1, x)                                   # inverted residual
    e1 = g.conv("expand", r1, 24, 1, 1, act=RELU6)
    d2 = g.conv("dw5s2", e1, 24, 5, 2, dw=True, act=RELU6)      # 6x5x24
    d3 = g.conv("dw7", d2, 24, 7, 1, dw=True)
    m1 = g.pool("maxpool", MAXPOOL, d3, 3, 1)
    a1 = g.pool("avgpool", AVGPOOL, m1, 2, 2)                   # 3x3x24
    y = g.conv("head", a1, 4, 1, 1)
    return build(Graph(g.ts, g.ops, [0], [y]))


def inputs(dtype: str, seed: int = 9) -> list[np.ndarray]:
    """The model's input: every int8 value, or floats of both signs."""
    r = np.random.default_rng(seed)
    if dtype == "int8":
        return [r.integers(-128, 128, X_SHAPE).astype(np.int8)]
    return [r.uniform(-2, 2, X_SHAPE).astype(np.float32)]
