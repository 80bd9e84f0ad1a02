"""Seeded one-op TFLite cases of STRIDED_SLICE, SPLIT and SPLIT_V, int8 and float32;
TFLM's interpreter is the reference (tests/test_tflite_field_ops.py runs them through
tflite_field_cases.CASES).

STRIDED_SLICE: every rank TFLM takes (1 to 4), begins and ends inside, outside and
negative, strides from -3 to 3, random begin and end masks and, where TFLM's kernel
writes the element, shrunk axes; never an empty output (tvmdev has no empty tensors).
Each output's shape is numpy's slicing of the same bounds (TFLM's Prepare checks it
against its own). int8 outputs keep the input's values
(TFLM copies them), quantized as the input or not.
"""

from __future__ import annotations

import numpy as np
from s8_cases import INT32, Case, Tensor, rand_int8, rand_quant, rng

FLOAT32 = 0
STRIDED_SLICE, SPLIT, SPLIT_V = 45, 49, 102
SHAPES = [[11], [6, 7], [3, 5, 8], [2, 4, 5, 6], [1, 6, 1, 9], [4, 3, 2, 8], [9, 16],
          [8, 9, 10], [3, 7, 6, 8]]


def _input(r: np.random.Generator, shape: list[int], int8: bool) -> tuple[Tensor, np.ndarray]:
    if int8:
        return Tensor(shape, rand_quant(r)), rand_int8(r, shape)
    return (Tensor(shape, None, type=FLOAT32),
            r.uniform(-8.0, 8.0, size=tuple(shape)).astype(np.float32))


def _output(r: np.random.Generator, shape: list[int], x: Tensor, int8: bool) -> Tensor:
    if not int8:
        return Tensor(shape, None, type=FLOAT32)
    return Tensor(shape, x.quant if r.integers(2) else rand_quant(r))


def _bounds(r: np.random.Generator, shape: list[int]
            ) -> tuple[list[int], list[int], list[int], int, int, int, tuple[object, ...]]:
    """Random begin, end, strides and masks, and numpy's index of the same slice."""
    begin, end, strides, index = [], [], [], []
    bmask = emask = shrink = 0
    for d, size in enumerate(shape):
        s = int(r.choice([1, 1, 1, 2, 3, -1, -2, -3]))
        b, e = (int(v) for v in r.integers(-size - 2, size + 3, 2))
        if s == 1 and r.integers(5) == 0:  # shrink the axis at a begin inside it
            b = int(r.integers(-size, size))
            shrink |= 1 << d
            begin.append(b), end.append(int(r.integers(-size - 2, size + 3))), strides.append(1)
            index.append(b)
            continue
        start: int | None = b
        stop: int | None = e
        if r.integers(4) == 0:
            bmask |= 1 << d
            start = None
        if r.integers(4) == 0:
            emask |= 1 << d
            stop = None
        begin.append(b), end.append(e), strides.append(s)
        index.append(slice(start, stop, s))
    return begin, end, strides, bmask, emask, shrink, tuple(index)


def strided_slice_cases(int8: bool, seed: int = 51) -> list[Case]:
    """STRIDED_SLICE with constant bounds and random masks, several per shape."""
    r = rng(seed)
    cases = []
    for shape in SHAPES:
        for _ in range(6):
            x, values = _input(r, shape, int8)
            out: list[int] = []
            while not out or 0 in out:  # tvmdev has no empty tensors
                begin, end, strides, bm, em, sm, index = _bounds(r, shape)
                out = list(np.empty(shape)[index].shape) or [0]
            consts = [Tensor([len(shape)], None, np.array(v, np.int32), INT32)
                      for v in (begin, end, strides)]
            opts = ("StridedSliceOptions", {"BeginMask": bm, "EndMask": em,
                                            "ShrinkAxisMask": sm})
            cases.append(Case(f"strided_slice {shape} {begin} {end} {strides} {bm} {em} {sm}",
                              STRIDED_SLICE, [x, *consts], _output(r, out, x, int8), opts,
                              [values]))
    return cases


def _parts(r: np.random.Generator, shape: list[int], axis: int, sizes: list[int], x: Tensor,
           int8: bool) -> list[Tensor]:
    outs = []
    for size in sizes:
        out = list(shape)
        out[axis] = size
        outs.append(_output(r, out, x, int8))
    return outs


def split_cases(int8: bool, seed: int = 52) -> list[Case]:
    """SPLIT into 1 to 4 equal parts along every axis (given negative now and then)."""
    r = rng(seed)
    cases = []
    for shape in ([12], [4, 6], [2, 6, 4], [2, 4, 6, 4], [1, 8, 8, 6]):
        for axis in range(len(shape)):
            n = int(r.choice([k for k in (1, 2, 3, 4) if shape[axis] % k == 0]))
            x, values = _input(r, shape, int8)
            given = axis - len(shape) if r.integers(2) else axis
            ax = Tensor([], None, np.array(given, np.int32), INT32)
            outs = _parts(r, shape, axis, [shape[axis] // n] * n, x, int8)
            cases.append(Case(f"split {shape} axis {given} into {n}", SPLIT, [ax, x], outs[0],
                              ("SplitOptions", {"NumSplits": n}), [values], more=outs[1:]))
    return cases


def split_v_cases(int8: bool, seed: int = 53) -> list[Case]:
    """SPLIT_V into random sizes (one of them -1 now and then) along every axis."""
    r = rng(seed)
    cases = []
    for shape in ([12], [5, 7], [3, 7, 4], [2, 5, 6, 3], [3, 9, 4, 6]):
        for axis in range(len(shape)):
            cuts = sorted({int(c) for c in r.integers(1, shape[axis], int(r.integers(0, 3)))})
            sizes = list(np.diff([0, *cuts, shape[axis]]))
            given = [int(s) for s in sizes]
            if len(sizes) > 1 and r.integers(2):
                given[int(r.integers(len(sizes)))] = -1
            x, values = _input(r, shape, int8)
            sz = Tensor([len(given)], None, np.array(given, np.int32), INT32)
            ax = Tensor([], None, np.array(axis, np.int32), INT32)
            outs = _parts(r, shape, axis, [int(s) for s in sizes], x, int8)
            cases.append(Case(f"split_v {shape} axis {axis} sizes {given}", SPLIT_V,
                              [x, sz, ax], outs[0], ("SplitVOptions", {"NumSplits": len(sizes)}),
                              [values], more=outs[1:]))
    return cases
