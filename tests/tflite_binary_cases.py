"""Seeded one-op TFLite cases of SUB, MAXIMUM and MINIMUM, int8 and float32, every
broadcast shape pair of tests/s8_op_cases.py (SUB with every fused activation), an
operand a constant now and then; TFLM's interpreter is the reference
(tests/test_tflite_field_ops.py runs them through tflite_field_cases.CASES).

int8 SUB takes random quantizations of both inputs and the output; int8 MAXIMUM and
MINIMUM one quantization throughout, as TFLM (which compares raw values) requires.
"""

from __future__ import annotations

import itertools

import numpy as np
from s8_cases import ACTIVATIONS, Case, Tensor, rand_int8, rand_quant, rng
from s8_op_cases import BINARY_SHAPES

from tvmdev.model.quant import Quant

FLOAT32 = 0
SUB, MAXIMUM, MINIMUM = 41, 55, 57
# larger pairs, so outputs span most of the int8 range
SHAPES = [*BINARY_SHAPES, ([2, 8, 16], [8, 1]), ([1, 4, 4, 16], [16]), ([64], [64])]


def _operand(r: np.random.Generator, shape: list[int], q: Quant | None, const: bool
             ) -> tuple[Tensor, np.ndarray | None]:
    """A model input (and its values) or a constant (values None)."""
    if q is not None:
        values = rand_int8(r, shape)
    else:
        values = r.uniform(-8.0, 8.0, size=tuple(shape)).astype(np.float32)
    kind = {} if q is not None else {"type": FLOAT32}
    if const:
        return Tensor(shape, q, values, **kind), None
    return Tensor(shape, q, **kind), values


def _cases(label: str, code: int, int8: bool, seed: int, same_quant: bool) -> list[Case]:
    r = rng(seed)
    acts = list(ACTIVATIONS) if code == SUB else ["NONE"]
    cases = []
    for i, ((sa, sb), act) in enumerate(itertools.product(SHAPES, acts)):
        qa = rand_quant(r) if int8 else None
        qb, qo = (qa, qa) if same_quant else (
            (rand_quant(r), rand_quant(r)) if int8 else (None, None))
        if int8 and not same_quant and r.integers(4) == 0:
            qb = qa  # equal input scales (the multipliers tie)
        a, va = _operand(r, sa, qa, False)
        b, vb = _operand(r, sb, qb, i % 5 == 4)
        out = list(np.broadcast_shapes(tuple(sa), tuple(sb)))
        y = Tensor(out, qo) if int8 else Tensor(out, None, type=FLOAT32)
        opts = (("SubOptions", {"FusedActivationFunction": ACTIVATIONS[act]})
                if code == SUB else None)
        values = [v for v in (va, vb) if v is not None]
        cases.append(Case(f"{label} {sa} {sb} {act} {qa} {qb} {qo}", code, [a, b], y, opts,
                          values))
    return cases


def sub_cases(int8: bool, seed: int = 41) -> list[Case]:
    """SUB: every broadcast pair with every fused activation, random quantizations."""
    return _cases("sub", SUB, int8, seed, False)


def maximum_cases(int8: bool, seed: int = 42) -> list[Case]:
    """MAXIMUM: every broadcast pair, one quantization throughout."""
    return _cases("maximum", MAXIMUM, int8, seed, True)


def minimum_cases(int8: bool, seed: int = 43) -> list[Case]:
    """MINIMUM: every broadcast pair, one quantization throughout."""
    return _cases("minimum", MINIMUM, int8, seed, True)
