"""int8 TFLite models with residual blocks (a CONV_2D whose output an ADD reads) and
depthwise blocks (a DEPTHWISE_CONV_2D whose output a 1x1 CONV_2D reads), one branch per
rule of tvmdev/plan/fuse.py, the fusions and the refusals, each branch read from the
model's input and written to its own output (tests/test_fuse.py runs them against TFLM's
interpreter).

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
CONV, ADD, DW = 3, 0, 4
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
    tail: bool = False  # a 1x1 conv reads the ADD's output, so it is no graph output


BRANCHES = [
    Branch("pw"),
    Branch("pw_relu6_first", conv_act=RELU6, add_act=RELU, residual_first=True),
    Branch("conv3_relu", kernel=3, conv_act=RELU, add_act=RELU6),
    Branch("shortcut_after", kernel=3, add_act=RELU, shortcut_after=True, tail=True),
    Branch("conv_is_output", fuses=False, conv_is_output=True,
           why="the conv's output is a graph output"),
    Branch("constant_residual", fuses=False, constant_residual=True,
           why="the ADD's other input is a constant"),
]


@dataclass(frozen=True)
class DwBranch:
    """An expansion to ``wide`` channels (1x1), a depthwise convolution, and a 1x1 to
    ``out`` channels reading it."""

    name: str
    kernel: int = 3
    stride: int = 1
    wide: int = 24
    out: int = 8
    dw_act: int = 0
    pw_act: int = 0
    pw_stride: int = 1
    fuses: bool = True
    why: str = ""  # fuse.decline_depthwise's or fuse.row_saves's reason


DW_BRANCHES = [
    DwBranch("dw_project", dw_act=RELU6),
    DwBranch("dw_stride2", kernel=5, stride=2, dw_act=RELU, pw_act=RELU),
    DwBranch("dw_widen", wide=8, out=16, fuses=False,
             why="336 bytes of input or output and a 48-byte row are no less than the "
                 "336-byte intermediate tensor"),
    DwBranch("dw_pw_strided", pw_stride=2, fuses=False,
             why="its reader is not a 1x1 conv2d of stride 1, without padding or groups"),
]


class _Builder:
    def __init__(self, seed: int, shape: list[int]) -> None:
        self.r = np.random.default_rng(seed)
        self.shape = shape
        self.ts = [T("x", shape, type=INT8, quant=([0.05], [-5]))]
        self.ops: list[Op] = []
        self.outputs: list[int] = []

    def act(self, name: str, shape: list[int]) -> int:
        scale = float(self.r.uniform(0.03, 0.3))
        self.ts.append(T(name, shape, type=INT8,
                         quant=([scale], [int(self.r.integers(-20, 20))])))
        return len(self.ts) - 1

    def conv(self, name: str, src: int, c_in: int, kernel: int, stride: int, act: int,
             hw: tuple[int, int], c_out: int = C, depthwise: bool = False) -> int:
        in_scale = (self.ts[src].quant or ([1.0], [0]))[0][0]
        shape = [1, kernel, kernel, c_out] if depthwise else [c_out, kernel, kernel, c_in]
        ws = [float(s) for s in self.r.uniform(0.5, 2.0, c_out) / 127 / 3]
        w = self.r.integers(-127, 128, shape).astype(np.int8)
        self.ts.append(T(f"{name}_w", shape, w, type=INT8, quant=(ws, [0] * c_out),
                         quant_axis=3 if depthwise else 0))
        self.ts.append(T(f"{name}_b", [c_out],
                         self.r.integers(-2000, 2000, c_out).astype(np.int32), type=INT32,
                         quant=([in_scale * s for s in ws], [0] * c_out)))
        oh, ow = (-(-hw[0] // stride), -(-hw[1] // stride))
        out = self.act(name, [1, oh, ow, c_out])
        opts = {"Padding": 0, "StrideH": stride, "StrideW": stride,
                "FusedActivationFunction": act, **({"DepthMultiplier": 1} if depthwise else {})}
        self.ops.append(Op(DW if depthwise else CONV, [src, len(self.ts) - 3, len(self.ts) - 2],
                           [out], ("DepthwiseConv2DOptions" if depthwise else "Conv2DOptions",
                                   opts)))
        return out

    def dw_branch(self, b: DwBranch) -> None:
        hw = (self.shape[1], self.shape[2])
        a = self.conv(f"{b.name}_a", 0, self.shape[3], 1, 1, 0, hw, b.wide)
        d = self.conv(f"{b.name}_dw", a, b.wide, b.kernel, b.stride, b.dw_act, hw, b.wide,
                      depthwise=True)
        dhw = (-(-hw[0] // b.stride), -(-hw[1] // b.stride))
        self.outputs.append(self.conv(f"{b.name}_pw", d, b.wide, 1, b.pw_stride, b.pw_act,
                                      dhw, b.out))

    def branch(self, b: Branch) -> None:
        hw = (self.shape[1], self.shape[2])
        a = self.conv(f"{b.name}_a", 0, self.shape[3], 1, 1, 0, hw)
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
        if b.tail:
            out = self.conv(f"{b.name}_tail", out, C, 1, 1, 0, hw)
        self.outputs.append(out)
        if b.conv_is_output:
            self.outputs.append(y)


def model(branches: list[Branch] | None = None, seed: int = 5,
          dw_branches: list[DwBranch] | None = None, shape: list[int] = X_SHAPE) -> bytes:
    """The merged model of ``branches`` and ``dw_branches`` (default: every branch) on an
    input of ``shape``."""
    g = _Builder(seed, shape)
    for b in BRANCHES if branches is None else branches:
        g.branch(b)
    for d in DW_BRANCHES if dw_branches is None else dw_branches:
        g.dw_branch(d)
    return build(Graph(g.ts, g.ops, [0], g.outputs))


# A larger input, whose conv outputs take several of CMSIS-NN's conv2d_add tiles (2,048
# bytes: 12 rows of 20 x 8), the last one shorter, and fuse there (the workspace shrinks).
TILED_SHAPE = [1, 30, 20, 5]
TILED = [Branch("tiled_conv3", kernel=3, conv_act=RELU, add_act=RELU6, tail=True),
         Branch("tiled_shortcut_after", kernel=3, add_act=RELU, shortcut_after=True,
                tail=True)]


def inputs(seed: int = 13, shape: list[int] = X_SHAPE) -> list[np.ndarray]:
    """The model's input: int8 values over the whole range."""
    return [np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)]
