"""Seeded one-op TFLite cases of the operators the field's models need beyond the MLPerf
Tiny ones (TRANSPOSE, LEAKY_RELU, HARD_SWISH, LOG_SOFTMAX, RESIZE_NEAREST_NEIGHBOR), int8
and float32 (tests/test_tflite_field_ops.py runs them against TFLM's interpreter).

Each is a :class:`s8_cases.Case` without params or reference: tvmdev's are computed by
importing the merged model and evaluating it (or running it), and TFLM is the reference.
int8 inputs span the whole int8 range; float32 ones [-8, 8), past every bend the ops
have (LEAKY_RELU's 0, HARD_SWISH's -3 and 3).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import tflite_binary_cases
import tflite_slice_cases
import tflite_tconv_cases
from s8_cases import INT32, Case, Tensor, rand_int8, rand_quant, rng

from tvmdev.model.quant import Quant

FLOAT32 = 0
TRANSPOSE, LOG_SOFTMAX, RESIZE_NEAREST_NEIGHBOR, LEAKY_RELU, HARD_SWISH = 39, 50, 97, 98, 117
RESIZE_BILINEAR = 23


def _input(r: np.random.Generator, shape: list[int], int8: bool) -> tuple[Tensor, np.ndarray]:
    """An operand that is a model input, and its values."""
    if int8:
        return Tensor(shape, rand_quant(r)), rand_int8(r, shape)
    return (Tensor(shape, None, type=FLOAT32),
            r.uniform(-8.0, 8.0, size=tuple(shape)).astype(np.float32))


def _output(r: np.random.Generator, shape: list[int], int8: bool) -> Tensor:
    return Tensor(shape, rand_quant(r)) if int8 else Tensor(shape, None, type=FLOAT32)


# Shapes with permutations that move data, and some that move only dims of size 1 (a
# reshape, no copy); every rank TFLM takes (1 to 5).
TRANSPOSE_SHAPES: list[tuple[list[int], list[int]]] = [
    ([5], [0]), ([3, 4], [1, 0]), ([2, 3, 4], [2, 0, 1]), ([2, 3, 4], [1, 2, 0]),
    ([1, 3, 5, 2], [0, 3, 1, 2]), ([1, 6, 5, 3], [0, 2, 1, 3]), ([2, 1, 3, 4], [3, 2, 1, 0]),
    ([1, 3, 4, 4], [0, 2, 3, 1]), ([2, 3, 2, 3, 2], [4, 1, 3, 0, 2]),
    ([1, 2, 3, 2, 2], [0, 2, 1, 4, 3]),
    ([1, 1, 5, 3], [1, 0, 2, 3]), ([1, 4, 1, 3], [0, 2, 1, 3]), ([3, 1, 1], [1, 0, 2]),
    ([1, 7, 1, 1, 2], [2, 1, 3, 4, 0]),
]


def transpose_cases(int8: bool, seed: int = 31) -> list[Case]:
    """TRANSPOSE by a constant int32 permutation; int8 outputs quantized unlike the input
    now and then (TFLM copies the values whatever the output's quantization says)."""
    r = rng(seed)
    cases = []
    for shape, perm in TRANSPOSE_SHAPES:
        x, values = _input(r, shape, int8)
        out = [shape[p] for p in perm]
        y = Tensor(out, x.quant) if int8 and r.integers(3) else _output(r, out, int8)
        p = Tensor([len(perm)], None, np.array(perm, np.int32), INT32)
        cases.append(Case(f"transpose {shape} {perm}", TRANSPOSE, [x, p], y, None, [values]))
    return cases


def _every_value(r: np.random.Generator, shape: list[int], int8: bool) -> np.ndarray:
    """Every int8 value (shape holds 256 elements), or float32 values over [-8, 8)."""
    if int8:
        return r.permutation(np.arange(-128, 128)).astype(np.int8).reshape(shape)
    return r.uniform(-8.0, 8.0, size=tuple(shape)).astype(np.float32)


def _unary(code: int, options: Callable[[np.random.Generator], Any], r: np.random.Generator,
           int8: bool, label: str, scales: tuple[float, float] = (0.002, 0.5)
           ) -> list[Case]:
    cases = []
    for shape in ([256], [1, 16, 16], [2, 8, 4, 4], [4, 64], [1, 4, 4, 16]):
        for _ in range(2):
            x, values = _input(r, shape, int8)
            if int8:
                x = Tensor(shape, rand_quant(r, *scales))
            y = _output(r, shape, int8)
            if int8 and x.quant is not None and r.integers(4):  # a scale near the input's
                y = Tensor(shape, Quant((float(np.float32(x.quant.scale[0] * r.uniform(0.3, 3))),),
                                        (int(r.integers(-128, 128)),)))
            opts = options(r)
            cases.append(Case(f"{label} {shape} {opts} {x.quant} {y.quant}", code, [x], y,
                              opts, [_every_value(r, shape, int8) if int8 else values]))
    return cases


ALPHAS = [0.2, 0.01, 0.3, -0.5, 1.0, 1.5, 0.0, 0.05, -0.25, 0.1, -2.0]


def leaky_relu_cases(int8: bool, seed: int = 32) -> list[Case]:
    """LEAKY_RELU with several alphas (0, above 1 and negative too), random quantizations
    of input and output, every int8 value."""
    alphas = iter(ALPHAS * 2)
    return _unary(LEAKY_RELU, lambda r: ("LeakyReluOptions", {"Alpha": next(alphas)}),
                  rng(seed), int8, "leaky_relu")


def hard_swish_cases(int8: bool, seed: int = 33) -> list[Case]:
    """HARD_SWISH on every int8 value, input scales from tiny to past 3 / 128 per step."""
    return _unary(HARD_SWISH, lambda r: None, rng(seed), int8, "hard_swish",
                  scales=(0.001, 0.2))


def log_softmax_cases(int8: bool, seed: int = 34) -> list[Case]:
    """LOG_SOFTMAX over the last axis, several depths and input scales; int8 outputs
    quantized as TFLM demands (16/256, 127)."""
    r = rng(seed)
    cases = []
    for shape, scale in itertools.product(
            ([1, 10], [2, 33], [1, 1000], [3, 4, 7], [1, 1], [1, 2, 2, 12]),
            (0.004, 0.05, 0.3, 1.0)):
        x, values = _input(r, shape, int8)
        if int8:
            x = Tensor(shape, Quant((float(np.float32(scale)),), (int(r.integers(-128, 128)),)))
            if r.integers(3) == 0:
                values = np.clip(values // 8, -128, 127).astype(np.int8)
        y = Tensor(shape, Quant((16 / 256,), (127,))) if int8 else _output(r, shape, False)
        cases.append(Case(f"log_softmax {shape} {x.quant}", LOG_SOFTMAX, [x], y, None,
                          [values]))
    return cases


# Input [N, H, W, C] and output size: up and down, by whole and odd ratios, to 1.
RESIZE_SHAPES = [([1, 4, 4, 3], [8, 8]), ([1, 5, 7, 2], [3, 4]), ([2, 3, 5, 4], [7, 11]),
                 ([1, 6, 6, 1], [1, 1]), ([1, 1, 1, 5], [3, 2]), ([1, 9, 4, 3], [4, 9]),
                 ([1, 7, 3, 2], [13, 3])]


def resize_nearest_cases(int8: bool, seed: int = 35) -> list[Case]:
    """RESIZE_NEAREST_NEIGHBOR by a constant int32 size, with every combination of
    align_corners and half_pixel_centers (TFLM computes all four)."""
    r = rng(seed)
    cases = []
    for (shape, size), (align, half) in itertools.product(
            RESIZE_SHAPES, itertools.product((False, True), repeat=2)):
        x, values = _input(r, shape, int8)
        out = [shape[0], *size, shape[3]]
        y = Tensor(out, x.quant) if int8 and r.integers(3) else _output(r, out, int8)
        opts = ("ResizeNearestNeighborOptions", {"AlignCorners": align,
                                                 "HalfPixelCenters": half})
        sz = Tensor([2], None, np.array(size, np.int32), INT32)
        cases.append(Case(f"resize_nearest {shape} to {size} align {align} half {half}",
                          RESIZE_NEAREST_NEIGHBOR, [x, sz], y, opts, [values]))
    return cases


def resize_bilinear_cases(int8: bool, seed: int = 36) -> list[Case]:
    """RESIZE_BILINEAR by a constant int32 size, plain, with align_corners and with
    half_pixel_centers (TFLM refuses the two together); int8 outputs quantized as the
    input or not (TFLM interpolates the raw values either way)."""
    r = rng(seed)
    cases = []
    for (shape, size), (align, half) in itertools.product(
            RESIZE_SHAPES + [([1, 8, 8, 4], [3, 5]), ([2, 2, 2, 8], [9, 9])],
            ((False, False), (True, False), (False, True))):
        x, values = _input(r, shape, int8)
        out = [shape[0], *size, shape[3]]
        y = Tensor(out, x.quant) if int8 and r.integers(3) else _output(r, out, int8)
        opts = ("ResizeBilinearOptions", {"AlignCorners": align, "HalfPixelCenters": half})
        sz = Tensor([2], None, np.array(size, np.int32), INT32)
        cases.append(Case(f"resize_bilinear {shape} to {size} align {align} half {half}",
                          RESIZE_BILINEAR, [x, sz], y, opts, [values]))
    return cases


CASES: dict[str, Callable[[bool], list[Case]]] = {
    "transpose": transpose_cases,
    "leaky_relu": leaky_relu_cases,
    "hard_swish": hard_swish_cases,
    "log_softmax": log_softmax_cases,
    "resize_nearest": resize_nearest_cases,
    "resize_bilinear": resize_bilinear_cases,
    "sub": tflite_binary_cases.sub_cases,
    "maximum": tflite_binary_cases.maximum_cases,
    "minimum": tflite_binary_cases.minimum_cases,
    "strided_slice": tflite_slice_cases.strided_slice_cases,
    "split": tflite_slice_cases.split_cases,
    "split_v": tflite_slice_cases.split_v_cases,
    "transpose_conv": tflite_tconv_cases.transpose_conv_cases,
}
KEYS = [(op, dtype) for op, dtype in itertools.product(CASES, ("int8", "float32"))]


def cases(op: str, dtype: str) -> list[Case]:
    """The cases of ``op`` on ``dtype``."""
    return CASES[op](dtype == "int8")
