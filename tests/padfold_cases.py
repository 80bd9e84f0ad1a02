"""TFLite models with a PAD in front of a convolution, depthwise convolution or pool: one
branch per rule of tvmdev/plan/padfold.py, the folds and the refusals, each branch read
from one model input and written to its own output (tests/test_padfold.py runs them
against TFLM's interpreter).

Each branch says whether its PAD folds and, when not, the reason padfold.decline gives.
int8 tensors share one quantization along a branch where TFLite requires it (PAD's input
and output; MAX_POOL's); weights are seeded, per channel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_build import Graph, Op, T, build

INT8, INT16, INT32, INT64, FLOAT32 = 9, 7, 2, 4, 0
PAD, PADV2, CONV, DW, MAXPOOL, AVGPOOL = 34, 60, 3, 4, 17, 1
RELU = 1
SCALE, ZP = 0.05, -5
SCALE16 = 1 / 4096  # int16: symmetric (zero point 0), inputs over [-8, 8)
X_SHAPE = [1, 9, 8, 4]


@dataclass(frozen=True)
class Branch:
    name: str
    consumer: int  # CONV, DW, MAXPOOL or AVGPOOL
    pads: list[list[int]]  # per dim [begin, end]
    value: float | None = None  # PADV2's constant (a real number), else PAD
    kernel: int = 3
    stride: int = 2
    same: bool = False  # the consumer's own padding: SAME, else VALID
    act: int = 0
    folds: bool = True
    why: str = ""  # padfold.decline's reason when it does not fold
    pad_is_output: bool = False  # the PAD's output is also a graph output
    second_reader: bool = False  # a second MAX_POOL reads the PAD's output


# The fill of a PADV2 whose value is q: the real number q stands for.
def real(q: int) -> float:
    return (q - ZP) * SCALE


SPATIAL = [[0, 0], [1, 2], [2, 0], [0, 0]]
INT8_BRANCHES = [
    Branch("conv_asymmetric", CONV, SPATIAL),
    Branch("dw_7x7_pad3", DW, [[0, 0], [3, 3], [3, 3], [0, 0]], kernel=7),
    Branch("dw_same_plus_pad", DW, [[0, 0], [1, 0], [0, 1], [0, 0]], stride=1, same=True),
    Branch("conv_padv2_zero_point", CONV, SPATIAL, value=real(ZP), stride=1),
    Branch("maxpool_lowest", MAXPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]], value=real(-128)),
    Branch("maxpool_below_relu", MAXPOOL, [[0, 0], [0, 1], [1, 0], [0, 0]],
           value=real(ZP - 3), act=RELU),
    Branch("conv_value_not_zero_point", CONV, SPATIAL, value=real(ZP + 7), folds=False,
           why="the PAD's value 2 is not the input's zero point -5 (the convolution pads "
               "with the zero point)"),
    Branch("maxpool_value_too_high", MAXPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]],
           value=real(ZP), folds=False,
           why="the PAD's value -5 is above -128, the least value the max pool keeps (it "
               "leaves the padding out)"),
    Branch("conv_pads_channels", CONV, [[0, 0], [1, 1], [1, 1], [0, 2]], folds=False,
           why="the PAD pads dim 3 (batch or channels), not only H and W"),
    Branch("dw_pads_batch", DW, [[1, 0], [1, 1], [1, 1], [0, 0]], folds=False,
           why="the PAD pads dim 0 (batch or channels), not only H and W"),
    Branch("conv_two_readers", CONV, SPATIAL, folds=False, second_reader=True,
           why="the PAD's output has 2 readers"),
    Branch("conv_pad_is_output", CONV, SPATIAL, folds=False, pad_is_output=True,
           why="the PAD's output is a graph output"),
    Branch("avgpool", AVGPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]], folds=False,
           why="its reader is avgpool2d (a PAD folds into conv2d, "
               "depthwise_conv2d and maxpool2d only)"),
]
FLOAT_BRANCHES = [
    Branch("f32_conv", CONV, SPATIAL),
    Branch("f32_dw", DW, [[0, 0], [2, 2], [2, 2], [0, 0]], kernel=5),
    Branch("f32_maxpool_lowest", MAXPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]],
           value=float(np.finfo(np.float32).min)),
    Branch("f32_conv_value_one", CONV, SPATIAL, value=1.0, folds=False,
           why="the PAD's value 1.0 is not 0.0 (the convolution pads with 0.0)"),
    Branch("f32_maxpool_zero", MAXPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]], folds=False,
           why="the PAD's value 0 is above -3.40282e+38, the least value the max pool keeps "
               "(it leaves the padding out)"),
]
INT16_BRANCHES = [
    Branch("i16_conv", CONV, SPATIAL),
    Branch("i16_dw_5x5", DW, [[0, 0], [2, 2], [2, 2], [0, 0]], kernel=5),
    Branch("i16_maxpool_lowest", MAXPOOL, [[0, 0], [1, 1], [1, 1], [0, 0]],
           value=-32768 * SCALE16),
    Branch("i16_conv_value_not_zero", CONV, SPATIAL, value=100 * SCALE16, folds=False,
           why="the PAD's value 100 is not the input's zero point 0 (the convolution pads "
               "with the zero point)"),
]
BRANCHES = {"int8": INT8_BRANCHES, "int16": INT16_BRANCHES, "float32": FLOAT_BRANCHES}
TYPES = {"int8": INT8, "int16": INT16, "float32": FLOAT32}


def _out_hw(b: Branch, h: int, w: int) -> tuple[int, int]:
    def one(n: int) -> int:
        return -(-n // b.stride) if b.same else (n - b.kernel) // b.stride + 1
    return one(h), one(w)


class _Builder:
    """Tensors and operators of the merged model, appended branch by branch."""

    def __init__(self, dtype: str, seed: int) -> None:
        self.dtype = dtype
        self.r = np.random.default_rng(seed)
        self.ts = [T("x", X_SHAPE, type=TYPES[dtype], quant=self.quant())]
        self.ops: list[Op] = []
        self.outputs: list[int] = []

    def quant(self, out: bool = False) -> tuple[list[float], list[int]] | None:
        """An activation's quantization (``out``: a convolution's output's)."""
        if self.dtype == "int8":
            return ([0.2], [3]) if out else ([SCALE], [ZP])
        if self.dtype == "int16":
            return ([16 / 32768], [0]) if out else ([SCALE16], [0])
        return None

    def tensor(self, name: str, shape: list[int], data: np.ndarray | None = None,
               type: int | None = None, quant: tuple[list[float], list[int]] | None = None,
               axis: int = 0) -> int:
        self.ts.append(T(name, shape, data, type=TYPES[self.dtype] if type is None else type,
                         quant=quant, quant_axis=axis))
        return len(self.ts) - 1

    def act(self, name: str, shape: list[int], out: bool = False) -> int:
        return self.tensor(name, shape, quant=self.quant(out))

    def fill(self, value: float) -> np.ndarray:
        """PADV2's constant: ``value`` quantized as the activations."""
        q = self.quant()
        if q is None:
            return np.array([value], np.float32)
        int_type = np.int8 if self.dtype == "int8" else np.int16
        return np.array([round(value / q[0][0]) + q[1][0]], int_type)

    def pad(self, b: Branch) -> tuple[int, list[int]]:
        shape = [d + p[0] + p[1] for d, p in zip(X_SHAPE, b.pads, strict=True)]
        pads = self.tensor(f"{b.name}_pads", [4, 2], np.array(b.pads, np.int32), INT32)
        out = self.act(f"{b.name}_padded", shape)
        ins = [0, pads]
        if b.value is not None:
            ins.append(self.tensor(f"{b.name}_value", [1], self.fill(b.value),
                                   quant=self.quant()))
        self.ops.append(Op(PADV2 if b.value is not None else PAD, ins, [out]))
        return out, shape

    def weights(self, b: Branch, c_in: int, c_out: int, depthwise: bool) -> list[int]:
        shape = [1, b.kernel, b.kernel, c_out] if depthwise else [c_out, b.kernel, b.kernel,
                                                                  c_in]
        q = self.quant()
        if q is not None:
            ws = [float(s) for s in self.r.uniform(0.5, 2.0, c_out) / 127 / 4]
            w = self.r.integers(-127, 128, shape).astype(np.int8)
            wide = self.dtype == "int16"
            bias = self.r.integers(-3000, 3000, c_out).astype(np.int64 if wide else np.int32)
            return [self.tensor(f"{b.name}_w", shape, w, INT8, (ws, [0] * c_out),
                                3 if depthwise else 0),
                    self.tensor(f"{b.name}_b", [c_out], bias, INT64 if wide else INT32,
                                ([q[0][0] * s for s in ws], [0] * c_out))]
        return [self.tensor(f"{b.name}_w", shape,
                            self.r.uniform(-1, 1, shape).astype(np.float32)),
                self.tensor(f"{b.name}_b", [c_out],
                            self.r.uniform(-1, 1, c_out).astype(np.float32))]

    def consumer(self, b: Branch, src: int, shape: list[int]) -> None:
        oh, ow = _out_hw(b, shape[1], shape[2])
        c = shape[3]
        opts: dict[str, float] = {"Padding": 0 if b.same else 1, "StrideH": b.stride,
                                  "StrideW": b.stride, "FusedActivationFunction": b.act}
        if b.consumer in (MAXPOOL, AVGPOOL):
            out = self.act(f"{b.name}_y", [shape[0], oh, ow, c])
            opts |= {"FilterHeight": b.kernel, "FilterWidth": b.kernel}
            self.ops.append(Op(b.consumer, [src], [out], ("Pool2DOptions", opts)))
        else:
            dw = b.consumer == DW
            m = c if dw else 6
            out = self.act(f"{b.name}_y", [shape[0], oh, ow, m], out=True)
            w = self.weights(b, c, m, dw)
            if dw:
                opts["DepthMultiplier"] = 1
            self.ops.append(Op(b.consumer, [src, *w], [out],
                               ("DepthwiseConv2DOptions" if dw else "Conv2DOptions", opts)))
        self.outputs.append(out)

    def branch(self, b: Branch) -> None:
        padded, shape = self.pad(b)
        self.consumer(b, padded, shape)
        if b.second_reader:
            self.consumer(Branch(f"{b.name}_2", MAXPOOL, b.pads), padded, shape)
        if b.pad_is_output:
            self.outputs.append(padded)


def model(dtype: str, branches: list[Branch] | None = None, seed: int = 3) -> bytes:
    """The merged model of ``branches`` (default: every branch of ``dtype``, int8, int16
    or float32)."""
    g = _Builder(dtype, seed)
    for b in BRANCHES[dtype] if branches is None else branches:
        g.branch(b)
    return build(Graph(g.ts, g.ops, [0], g.outputs))


def inputs(dtype: str, seed: int = 11) -> list[np.ndarray]:
    """The model's input: every int8 value, int16 ones over the whole range, or floats
    of both signs."""
    r = np.random.default_rng(seed)
    if dtype == "int8":
        return [r.integers(-128, 128, X_SHAPE).astype(np.int8)]
    if dtype == "int16":
        return [r.integers(-32768, 32768, X_SHAPE).astype(np.int16)]
    return [r.uniform(-4, 4, X_SHAPE).astype(np.float32)]
