"""One-operator int8 FULLY_CONNECTED models for tvmdev's own Cortex-M fully connected kernel
(runtime/kernels/tvmdev_cm/fully_connected_s8*.c, tests/test_tvmdev_cm_fc.py), merged into
one .tflite whose outputs TFLM's interpreter computes (tests/tflm_ref.py).

The edges the kernels meet: column counts that are and are not multiples of 4 (the DSP
path's words) and 16 (Helium's vectors: 1, 3, 5, 17, 33, 100, 250), row counts that are and
are not multiples of 4 (1, 2, 3, 5, 7, 13), batches of 2 and 3, weights per tensor and per
row, no bias, zero points at both ends of the int8 range, weights of +-127, biases up to
2^20, effective scales from 2^-20 to 4 (shifts from -19 to 3: right shifts of 0 among
them), small weights and scales whose outputs are rounding ties (negative ones among them),
every fused activation. Inputs span the whole int8 range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_build import Graph, Op, T, build

INT8, INT32, FULLY_CONNECTED = 9, 2, 9
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


@dataclass(frozen=True)
class Fc:
    """One fully connected layer: ``rows`` outputs of ``cols`` inputs, ``batch`` rows."""

    rows: int
    cols: int
    batch: int = 1
    act: str = "NONE"
    zp_in: int = 3
    zp_out: int = -5
    per_channel: bool = True
    bias: bool = True
    extreme: bool = False  # weights of +-127, large biases, scales 2^-20 to 2^top
    top: float = 2
    small: bool = False  # weights -3..3, small biases, scales 2^-4..2^-1.2: ties
    zp_w: int = 0  # the weights' zero point (per tensor)


def _scales(d: Fc, s_in: float, s_out: float) -> list[float]:
    n = d.rows if d.per_channel else 1
    if d.small:
        ratios = np.exp2(np.linspace(-4, -1.2, n))
    elif d.extreme:  # per tensor: the largest
        ratios = np.exp2(np.linspace(-20, d.top, n) if n > 1 else [d.top])
    else:
        return [float(np.float32(v)) for v in np.linspace(0.3, 2.0, n) / 127 / 8]
    return [float(np.float32(v * s_out / s_in)) for v in ratios]


def _tensors(r: np.random.Generator, d: Fc, i: int) -> tuple[list[T], np.ndarray]:
    s_in, s_out = 0.03, 0.05
    s_w = _scales(d, s_in, s_out)
    w = r.integers(-3, 4, (d.rows, d.cols)) if d.small else r.integers(-127, 128,
                                                                      (d.rows, d.cols))
    if d.extreme:
        w[:, ::2] = 127 * np.sign(w[:, ::2] + 0.5).astype(np.int64)
    big = 2**20 if d.extreme else 3000
    b = r.integers(-50, 51, d.rows) if d.small else r.integers(-big, big, d.rows)
    x = r.integers(-128, 128, (d.batch, d.cols)).astype(np.int8)
    ts = [T(f"x{i}", [d.batch, d.cols], type=INT8, quant=([s_in], [d.zp_in])),
          T(f"w{i}", [d.rows, d.cols], w.astype(np.int8), type=INT8,
            quant=(s_w, [d.zp_w] * len(s_w)), quant_axis=0),
          T(f"b{i}", [d.rows], b.astype(np.int32), type=INT32,
            quant=([s_in * s for s in s_w], [0] * len(s_w))),
          T(f"y{i}", [d.batch, d.rows], type=INT8, quant=([s_out], [d.zp_out]))]
    return ts, x


def merged(cases: list[Fc], seed: int = 26) -> tuple[bytes, list[np.ndarray]]:
    """One .tflite with every case's operator, and its inputs in order."""
    r = np.random.default_rng(seed)
    tensors: list[T] = []
    ops, inputs, outputs, arrays = [], [], [], []
    for i, d in enumerate(cases):
        ts, x = _tensors(r, d, i)
        base = len(tensors)
        tensors += ts
        opts = ("FullyConnectedOptions", {"FusedActivationFunction": ACTIVATIONS[d.act]})
        ops.append(Op(FULLY_CONNECTED, [base, base + 1, base + 2 if d.bias else -1],
                      [base + 3], opts))
        inputs.append(base)
        outputs.append(base + 3)
        arrays.append(x)
    return build(Graph(tensors, ops, inputs, outputs)), arrays


CASES = [
    Fc(8, 16), Fc(5, 17, act="RELU"), Fc(13, 33, zp_in=-128, act="RELU6"),
    Fc(7, 100, batch=2, per_channel=False), Fc(1, 5, zp_in=127, zp_out=127),
    Fc(3, 3, act="RELU_N1_TO_1"), Fc(2, 1, bias=False), Fc(16, 250, batch=3),
    Fc(12, 64, extreme=True, top=-1.5, zp_out=-128), Fc(20, 12, extreme=True, top=2),
    Fc(9, 40, small=True), Fc(6, 24, small=True, act="RELU", zp_in=-128, zp_out=-20),
    Fc(4, 48, per_channel=False, small=True, bias=False),
    Fc(128, 640, act="RELU"),
]
# Declined on the DSP path (CMSIS-NN takes it there; Helium's requantization needs no
# proof): an effective scale of 2^8 (a left shift of 8) over 300 columns of +-127, every
# output saturated. Declined on both: a weights zero point of 5.
DSP_DECLINED = [Fc(6, 300, extreme=True, top=8, per_channel=False)]
DECLINED = [Fc(5, 20, per_channel=False, zp_w=5)]
