"""int8 TFLite models with residual blocks: a CONV_2D whose output an ADD reads, one
branch per rule of tvmdev/plan/fuse.py, the fusions and the refusals, each branch read
from the model's input and written to its own output (tests/test_fuse.py runs them
against TFLM's interpreter).

Every branch starts with a 1x1 convolution ``<name>_a`` of the input (so its residual is
a tensor that dies at the ADD, which the fused kernel may overwrite), then its block.
Quantizations differ on purpose: the conv's output, the residual and the ADD's output
each have their own scale and zero point, so the ADD rescales both operands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_build import Graph, Op, T, build

INT8, INT32 = 9, 2
CONV, ADD = 3, 0
RELU, RELU6 = 1, 3
X_SHAPE = [1, 7, 6, 5]
C = 8  # the channels of every branch


@dataclass(frozen=True)
class Branch:
    name: str
    kernel: int = 1
    stride: int = 1
    conv_act: int = 0  # the conv's fused activation
    add_act: int = 0  # the ADD's
    residual_first: bool = False  # the residual is the ADD's first operand
    shortcut_after: bool = False  # the residual is a 1x1 conv computed after the conv
    fuses: bool = True
    why: str = ""  # fuse.decline's reason when it does not fuse
    conv_is_output: bool = False  # the conv's output is also a graph output
    constant_residual: bool = False  # the residual is a constant [1, 1, 1, C]


BRANCHES = [
    Branch("pw"),
    Branch("pw_relu6_first", conv_act=RELU6, add_act=RELU, residual_first=True),
    Branch("conv3_relu", kernel=3, conv_act=RELU, add_act=RELU6),
    Branch("shortcut_after", kernel=3, add_act=RELU, shortcut_after=True),
    Branch("conv_is_output", fuses=False, conv_is_output=True,
           why="the conv's output is a graph output"),
    Branch("constant_residual", fuses=False, constant_residual=True,
           why="the ADD's other input is a constant"),
]


class _Builder:
    def __init__(self, seed: int) -> None:
        self.r = np.random.default_rng(seed)
        self.ts = [T("x", X_SHAPE, type=INT8, quant=([0.05], [-5]))]
        self.ops: list[Op] = []
        self.outputs: list[int] = []

    def act(self, name: str, shape: list[int]) -> int:
        scale = float(self.r.uniform(0.03, 0.3))
        self.ts.append(T(name, shape, type=INT8,
                         quant=([scale], [int(self.r.integers(-20, 20))])))
        return len(self.ts) - 1

    def conv(self, name: str, src: int, c_in: int, kernel: int, stride: int, act: int,
             hw: tuple[int, int]) -> int:
        in_scale = (self.ts[src].quant or ([1.0], [0]))[0][0]
        shape = [C, kernel, kernel, c_in]
        ws = [float(s) for s in self.r.uniform(0.5, 2.0, C) / 127 / 3]
        w = self.r.integers(-127, 128, shape).astype(np.int8)
        self.ts.append(T(f"{name}_w", shape, w, type=INT8, quant=(ws, [0] * C)))
        self.ts.append(T(f"{name}_b", [C], self.r.integers(-2000, 2000, C).astype(np.int32),
                         type=INT32, quant=([in_scale * s for s in ws], [0] * C)))
        oh, ow = (-(-hw[0] // stride), -(-hw[1] // stride))
        out = self.act(name, [1, oh, ow, C])
        self.ops.append(Op(CONV, [src, len(self.ts) - 3, len(self.ts) - 2], [out],
                           ("Conv2DOptions", {"Padding": 0, "StrideH": stride,
                                              "StrideW": stride,
                                              "FusedActivationFunction": act})))
        return out

    def branch(self, b: Branch) -> None:
        hw = (X_SHAPE[1], X_SHAPE[2])
        a = self.conv(f"{b.name}_a", 0, X_SHAPE[3], 1, 1, 0, hw)
        y = self.conv(f"{b.name}_conv", a, C, b.kernel, b.stride, b.conv_act, hw)
        if b.shortcut_after:
            res = self.conv(f"{b.name}_short", a, C, 1, 1, 0, hw)
        elif b.constant_residual:
            res = len(self.ts)
            self.ts.append(T(f"{b.name}_r", [1, 1, 1, C],
                             self.r.integers(-128, 128, [1, 1, 1, C]).astype(np.int8),
                             type=INT8, quant=([0.1], [2])))
        else:
            res = a
        out = self.act(f"{b.name}_y", [1, *hw, C])
        pair = [res, y] if b.residual_first else [y, res]
        self.ops.append(Op(ADD, pair, [out], ("AddOptions",
                                              {"FusedActivationFunction": b.add_act})))
        self.outputs.append(out)
        if b.conv_is_output:
            self.outputs.append(y)


def model(branches: list[Branch] | None = None, seed: int = 5) -> bytes:
    """The merged model of ``branches`` (default: every branch)."""
    g = _Builder(seed)
    for b in BRANCHES if branches is None else branches:
        g.branch(b)
    return build(Graph(g.ts, g.ops, [0], g.outputs))


def inputs(seed: int = 13) -> list[np.ndarray]:
    """The model's input: int8 values over the whole range."""
    return [np.random.default_rng(seed).integers(-128, 128, X_SHAPE).astype(np.int8)]
