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

import numpy as np
from s8_cases import INT32, Case, Tensor, rand_int8, rand_quant, rng

FLOAT32 = 0
TRANSPOSE = 39


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


CASES: dict[str, Callable[[bool], list[Case]]] = {
    "transpose": transpose_cases,
}
KEYS = [(op, dtype) for op, dtype in itertools.product(CASES, ("int8", "float32"))]


def cases(op: str, dtype: str) -> list[Case]:
    """The cases of ``op`` on ``dtype``."""
    return CASES[op](dtype == "int8")
