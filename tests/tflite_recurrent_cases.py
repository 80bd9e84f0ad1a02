"""Seeded one-op TFLite models of SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM, whose state is a
variable tensor (tests/test_tflite_recurrent.py runs them against TFLM's interpreter over
consecutive invocations).

SVDF: int8 with int16 time weights and state (the full-integer SVDF), int8 with int8
ones (a state zero point other than 0, which a reset must restore), float32; batch 1 and
2, rank 1 and 2. LSTM: TFLM's 8x8->16 int8 LSTM (the cell's scale a power of two, the
hidden state's zero point any) and float32; batch-major and time-major, batch 1 and 3,
with and without a cell clip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_build import Graph, Op, T, build

FLOAT32, INT32, INT16, INT8 = 0, 2, 7, 9
SVDF, LSTM = 27, 44
NTYPE = {FLOAT32: np.float32, INT32: np.int32, INT16: np.int16, INT8: np.int8}


@dataclass
class Recurrent:
    """A one-op model and the inputs of each of its invocations."""

    label: str
    data: bytes
    invocations: list[list[np.ndarray]]
    int8: bool


def _scale(r: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.float32(np.exp(r.uniform(np.log(lo), np.log(hi)))))


def _values(r: np.random.Generator, shape: list[int], kind: int, span: float = 1.0
            ) -> np.ndarray:
    if kind == FLOAT32:
        return r.uniform(-span, span, size=tuple(shape)).astype(np.float32)
    info = np.iinfo(NTYPE[kind])
    lo, hi = max(info.min, -int(span)), min(info.max, int(span))
    return r.integers(lo, hi + 1, size=tuple(shape)).astype(NTYPE[kind])


def _inputs(r: np.random.Generator, shape: list[int], kind: int, n: int) -> list[list[np.ndarray]]:
    return [[_values(r, shape, kind, 128 if kind == INT8 else 1.0)] for _ in range(n)]


def svdf_case(seed: int, kind: str, batch: int, rank: int, units: int = 4, size: int = 12,
              memory: int = 5) -> Recurrent:
    """``kind``: "s16" (int8 with int16 time weights and state), "s8" or "float32"."""
    r = np.random.default_rng(seed)
    filters = units * rank
    if kind == "float32":
        ts = [T("x", [batch, size]),
              T("wf", [filters, size], _values(r, [filters, size], FLOAT32, 0.5)),
              T("wt", [filters, memory], _values(r, [filters, memory], FLOAT32, 0.5)),
              T("b", [units], _values(r, [units], FLOAT32, 0.5)),
              T("state", [batch, filters * memory], variable=True),
              T("y", [batch, units])]
        opts = {"Rank": rank, "FusedActivationFunction": 1 if seed % 2 else 0}
    else:
        wide = INT16 if kind == "s16" else INT8
        s_in, s_wf = _scale(r, 0.01, 0.05), _scale(r, 0.002, 0.01)
        s_st = _scale(r, 0.001, 0.01) if kind == "s16" else _scale(r, 0.05, 0.2)
        s_wt = _scale(r, 0.00005, 0.0002) if kind == "s16" else _scale(r, 0.005, 0.02)
        z_st = 0 if kind == "s16" else int(r.integers(-20, 20))
        q = [([s_in], [int(r.integers(-10, 10))]), ([s_wf], [0]), ([s_wt], [0]),
             ([float(np.float32(s_st * s_wt))], [0]), ([s_st], [z_st]),
             ([_scale(r, *((0.005, 0.015) if kind == "s16" else (0.02, 0.08)))],
              [int(r.integers(-20, 20))])]
        ts = [T("x", [batch, size], type=INT8, quant=q[0]),
              T("wf", [filters, size], _values(r, [filters, size], INT8, 127), type=INT8,
                quant=q[1]),
              T("wt", [filters, memory], _values(r, [filters, memory], wide, 2000 if
                                                   kind == "s16" else 127), type=wide,
                quant=q[2]),
              T("b", [units], _values(r, [units], INT32, 3000), type=INT32, quant=q[3]),
              T("state", [batch, filters * memory], type=wide, quant=q[4], variable=True),
              T("y", [batch, units], type=INT8, quant=q[5])]
        opts = {"Rank": rank}
    data = build(Graph(ts, [Op(SVDF, [0, 1, 2, 3, 4], [5], ("SVDFOptions", opts))], [0], [5]))
    int8 = kind != "float32"
    return Recurrent(f"svdf {kind} batch {batch} rank {rank}", data,
                     _inputs(r, [batch, size], INT8 if int8 else FLOAT32, 3), int8)


def _lstm_tensors(r: np.random.Generator, int8: bool, x: list[int], batch: int, size: int,
                  state: int) -> list[T]:
    """The input, 8 weights, 4 biases, hidden and cell state and output of an LSTM."""
    if not int8:
        ws = [T(f"w{k}", [state, size if k < 4 else state],
                _values(r, [state, size if k < 4 else state], FLOAT32, 0.6)) for k in range(8)]
        bs = [T(f"b{k}", [state], _values(r, [state], FLOAT32, 0.5)) for k in range(4)]
        return [T("x", x), *ws, *bs, T("h", [batch, state], variable=True),
                T("c", [batch, state], variable=True), T("y", [*x[:2], state])]
    s_in, z_in = _scale(r, 0.01, 0.03), int(r.integers(-30, 30))
    s_h, z_h = _scale(r, 0.006, 0.01), int(r.integers(-20, 20))
    s_c = 2.0 ** -int(r.integers(10, 13))
    ws, bs = [], []
    for k in range(8):
        cols, s_x = (size, s_in) if k < 4 else (state, s_h)
        s_w = _scale(r, 0.002, 0.01)
        ws.append(T(f"w{k}", [state, cols], _values(r, [state, cols], INT8, 127), type=INT8,
                    quant=([s_w], [0])))
        if k < 4:
            bs.append(T(f"b{k}", [state], _values(r, [state], INT32, 20000), type=INT32,
                        quant=([float(np.float32(s_x * s_w))], [0])))
    return [T("x", x, type=INT8, quant=([s_in], [z_in])), *ws, *bs,
            T("h", [batch, state], type=INT8, quant=([s_h], [z_h]), variable=True),
            T("c", [batch, state], type=INT16, quant=([s_c], [0]), variable=True),
            T("y", [*x[:2], state], type=INT8, quant=([s_h], [z_h]))]


def lstm_case(seed: int, int8: bool, batch: int, time_major: bool, clip: float = 0.0,
              steps: int = 4, size: int = 6, state: int = 5) -> Recurrent:
    """A standard LSTM (TFLite's 24 operands, the variants' absent)."""
    r = np.random.default_rng(seed)
    x = [steps, batch, size] if time_major else [batch, steps, size]
    ts = _lstm_tensors(r, int8, x, batch, size, state)
    ins = [0, *range(1, 9), -1, -1, -1, *range(9, 13), -1, -1, 13, 14, -1, -1, -1, -1]
    opts = {"FusedActivationFunction": 4, "CellClip": clip, "ProjClip": 0.0,
            "TimeMajor": time_major}
    data = build(Graph(ts, [Op(LSTM, ins, [15], ("UnidirectionalSequenceLSTMOptions", opts))],
                       [0], [15]))
    label = (f"lstm {'int8' if int8 else 'float32'} batch {batch} "
             f"{'time' if time_major else 'batch'}-major clip {clip:g}")
    return Recurrent(label, data, _inputs(r, x, INT8 if int8 else FLOAT32, 3), int8)


def cases() -> list[Recurrent]:
    """Every variant above."""
    return [svdf_case(1, "s16", 1, 1), svdf_case(2, "s16", 2, 2), svdf_case(3, "s8", 2, 1),
            svdf_case(4, "float32", 1, 2), svdf_case(5, "float32", 2, 1),
            lstm_case(6, True, 1, False), lstm_case(7, True, 3, True, clip=0.5),
            lstm_case(8, True, 3, False), lstm_case(9, False, 1, False),
            lstm_case(10, False, 3, True, clip=0.4)]


def lstm_variant(seed: int, operand: int) -> bytes:
    """A float32 LSTM with operand ``operand`` (a peephole, projection or layer-norm
    tensor) given, or, for a negative ``operand``, without its input gate (CIFG)."""
    r = np.random.default_rng(seed)
    ts = _lstm_tensors(r, False, [1, 2, 3], 1, 3, 2)
    ins = [0, *range(1, 9), -1, -1, -1, *range(9, 13), -1, -1, 13, 14, -1, -1, -1, -1]
    if operand < 0:
        ins[1] = ins[5] = ins[12] = -1
    else:
        shape = [2, 3] if operand == 16 else [2]
        ts.append(T("extra", shape, _values(r, shape, FLOAT32)))
        ins[operand] = len(ts) - 1
    opts = {"FusedActivationFunction": 4, "CellClip": 0.0, "ProjClip": 0.0, "TimeMajor": False}
    return build(Graph(ts, [Op(LSTM, ins, [15], ("UnidirectionalSequenceLSTMOptions", opts))],
                       [0], [15]))
