"""Random NHWC graphs around depthwise convolutions, for the in-place replay
(tests/test_plan_inplace.py): float and int8 chains with skips of depthwise
convolutions (3x3 and 5x5, strides 1 and 2, SAME and VALID padding, dilation 2, a channel
multiplier of 2), relu, add, 1x1 convolutions, QUANTIZE, DEQUANTIZE and reshapes.
"""

from __future__ import annotations

import random
from pathlib import Path

from tvmdev.load.model import load_model
from tvmdev.model.graph import Model


def _q(rng: random.Random) -> str:
    return (f"quant: {{scale: [{rng.choice([0.02, 0.05, 0.1])}], "
            f"zero_point: [{rng.randint(-8, 8)}]}}")


class _Graph:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.tensors: list[str] = []
        self.consts: list[str] = []
        self.ops: list[str] = []
        # name, kind ("f" or "q"), shape (H, W, C)
        self.made: list[tuple[str, str, tuple[int, int, int]]] = []
        self.quants: dict[str, str] = {}

    def new(self, kind: str, shape: tuple[int, int, int], quant: str = "") -> str:
        name = f"t{len(self.made)}"
        if kind == "q":
            self.quants[name] = quant or _q(self.rng)
            self.tensors.append(f"  {name}: {{dtype: int8, {self.quants[name]}}}")
        self.made.append((name, kind, shape))
        return name

    def op(self, op: str, inputs: list[str], out: str, attrs: str = "") -> None:
        i = len(self.ops)
        self.ops.append(f"  - {{name: o{i}, op: {op}, inputs: [{', '.join(inputs)}], "
                        f"outputs: [{out}]" + (f", attrs: {{{attrs}}}" if attrs else "") + "}")

    def const(self, kind: str, shape: list[int], n: int) -> str:
        name = f"w{len(self.consts)}"
        if kind == "f":
            self.consts.append(f"  {name}: {{shape: {shape}, dtype: float32, random: "
                               f"{{seed: {len(self.consts)}, low: -0.5, high: 0.5}}}}")
        else:
            values = [self.rng.randint(-127, 127) for _ in range(n)]
            self.consts.append(f"  {name}: {{shape: {shape}, dtype: int8, values: {values}, "
                               "quant: {scale: [0.01], zero_point: [0]}}")
        return name

    def bias(self, kind: str, n: int) -> str:
        name = f"b{len(self.consts)}"
        if kind == "f":
            self.consts.append(f"  {name}: {{shape: [{n}], dtype: float32, random: "
                               f"{{seed: {len(self.consts)}, low: -0.5, high: 0.5}}}}")
        else:
            values = [self.rng.randint(-500, 500) for _ in range(n)]
            self.consts.append(f"  {name}: {{shape: [{n}], dtype: int32, values: {values}}}")
        return name

    def depthwise(self, src: str, kind: str, shape: tuple[int, int, int]) -> None:
        rng = self.rng
        h, w, c = shape
        k, s = rng.choice([3, 3, 5]), rng.choice([1, 1, 2])
        dil = 2 if s == 1 and rng.random() < 0.2 else 1
        mult = 2 if rng.random() < 0.15 else 1
        reach = (k - 1) * dil
        same = rng.random() < 0.7 or min(h, w) <= reach
        pad = [reach // 2, reach // 2, reach - reach // 2, reach - reach // 2] if same \
            else [0, 0, 0, 0]
        oh = (h + pad[0] + pad[2] - reach - 1) // s + 1
        ow = (w + pad[1] + pad[3] - reach - 1) // s + 1
        wt = self.const(kind, [1, k, k, c * mult], k * k * c * mult)
        out = self.new(kind, (oh, ow, c * mult))
        self.op("depthwise_conv2d", [src, wt, self.bias(kind, c * mult)], out,
                f"strides: [{s}, {s}], pads: {pad}, dilations: [{dil}, {dil}], "
                f"depth_multiplier: {mult}")

    def step(self) -> None:
        rng = self.rng
        src, kind, shape = self.made[-1]
        h, w, c = shape
        same = [t for t, k, sh in self.made[-8:-1] if k == kind and sh == shape]
        roll = rng.random()
        if roll < 0.4 and h >= 3 and w >= 3:
            self.depthwise(src, kind, shape)
        elif roll < 0.5 and same:
            self.op("add", [src, rng.choice(same)], self.new(kind, shape))
        elif roll < 0.6 and kind == "f":
            self.op("relu", [src], self.new("f", shape))
        elif roll < 0.7:
            m = rng.choice([2, 4, 8])
            wt = self.const(kind, [m, 1, 1, c], m * c)
            self.op("conv2d", [src, wt, self.bias(kind, m)], self.new(kind, (h, w, m)),
                    "layout: NHWC, kernel_shape: [1, 1]")
        elif roll < 0.78:
            out = self.new(kind, shape, self.quants.get(src, ""))  # a view keeps it
            self.op("reshape", [src], out, f"shape: [1, {h}, {w}, {c}]")
        elif kind == "q" and roll < 0.88:
            self.op("dequantize", [src], self.new("f", shape))
        else:
            self.op("quantize", [src], self.new("q", shape))


def random_dw_model(tmp: Path, n_ops: int, seed: int) -> Model:
    """A random NHWC chain with skips around depthwise convolutions (float and int8)."""
    g = _Graph(seed)
    rng = g.rng
    shape = (rng.randint(6, 14), rng.randint(6, 14), rng.randint(2, 6))
    g.made.append(("t0", "f", shape))
    while len(g.ops) < n_ops:
        g.step()
    last, kind, (h, w, c) = g.made[-1]
    if kind == "q":
        g.op("dequantize", [last], g.new("f", (h, w, c)))
        last = g.made[-1][0]
    inner = [t for t in g.tensors if not t.startswith(f"  {last}:")]
    text = "\n".join([
        "name: dwmix", "inputs:", f"  t0: {{shape: [1, {shape[0]}, {shape[1]}, {shape[2]}], "
        "dtype: float32}", "outputs:", f"  {last}: {{shape: [1, {h}, {w}, {c}], dtype: float32}}",
        "tensors:" if inner else "tensors: {}", *inner,
        "constants:" if g.consts else "constants: {}", *g.consts,
        "operators:", *g.ops]) + "\n"
    path = tmp / f"dwmix{seed}.yaml"
    path.write_text(text)
    return load_model(path)
