"""Seeded one-op TFLite cases of TRANSPOSE_CONV, int8 and float32; TFLM's interpreter is
the reference (tests/test_tflite_field_ops.py runs them through tflite_field_cases.CASES).

Strides 1 to 3, SAME and VALID, windows from 1 x 1 to 5 x 4, outputs of the size
TensorFlow gives and a row or column smaller or larger, with and without a bias, every
fused activation TFLM's int8 kernel takes. int8 weights are symmetric, per output channel
or per tensor; the output scale follows the sums' spread, so outputs span most of int8.
"""

from __future__ import annotations

import numpy as np
from s8_cases import ACTIVATIONS, INT32, Case, Tensor, rand_int8, rand_quant, rng

from tvmdev.model.quant import Quant

FLOAT32 = 0
TRANSPOSE_CONV = 67
# input [N, H, W, C], output channels, window, strides, padding (0 SAME, 1 VALID), output
# size change from TensorFlow's
SHAPES = [([1, 4, 4, 3], 5, (3, 3), (2, 2), 0, (0, 0)),
          ([1, 3, 5, 2], 4, (3, 2), (1, 1), 0, (0, 0)),
          ([2, 3, 3, 4], 3, (2, 2), (2, 2), 1, (0, 0)),
          ([1, 5, 4, 3], 2, (5, 4), (3, 2), 1, (0, 0)),
          ([1, 4, 4, 2], 6, (3, 3), (2, 2), 0, (-1, 1)),
          ([1, 2, 3, 8], 4, (1, 1), (3, 3), 1, (1, 0)),
          ([1, 6, 2, 5], 3, (4, 3), (2, 3), 0, (1, -1)),
          ([1, 1, 1, 16], 8, (4, 4), (1, 1), 1, (0, 0))]


def _out_size(h: int, k: int, s: int, padding: int) -> int:
    return h * s if padding == 0 else (h - 1) * s + k


def _weights(r: np.random.Generator, m: int, kh: int, kw: int, c: int, int8: bool
             ) -> tuple[Tensor, np.ndarray]:
    shape = [m, kh, kw, c]
    if not int8:
        w = r.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        return Tensor(shape, None, w, type=FLOAT32), w
    scales = [float(np.float32(s)) for s in np.exp(r.uniform(np.log(0.002), np.log(0.05), m))]
    q = Quant(tuple(scales), (0,) * m) if r.integers(3) else Quant((scales[0],), (0,))
    w = rand_int8(r, shape)
    return Tensor(shape, q, w), w


def transpose_conv_cases(int8: bool, seed: int = 61) -> list[Case]:
    """TRANSPOSE_CONV over SHAPES, each with and without a bias and fused activations."""
    r = rng(seed)
    cases = []
    acts = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
    for k, (xs, m, (kh, kw), (sh, sw), padding, grow) in enumerate(SHAPES * 2):
        n, h, w, c = xs
        out = [n, _out_size(h, kh, sh, padding) + grow[0],
               _out_size(w, kw, sw, padding) + grow[1], m]
        wt, wv = _weights(r, m, kh, kw, c, int8)
        act = acts[k % len(acts)]
        if int8:
            qx = rand_quant(r, 0.01, 0.1)
            x = Tensor(xs, qx)
            values = rand_int8(r, xs)
            wscale = np.array(wt.quant.scale if wt.quant else [1.0]) * np.ones(m)
            spread = 128 * 128 * np.sqrt(kh * kw * c / (sh * sw)) * qx.scale[0] * wscale.mean()
            y = Tensor(out, Quant((float(np.float32(spread / 25)),), (int(r.integers(-60, 60)),)))
        else:
            x = Tensor(xs, None, type=FLOAT32)
            values = r.uniform(-2.0, 2.0, size=tuple(xs)).astype(np.float32)
            y = Tensor(out, None, type=FLOAT32)
        shape = Tensor([4], None, np.array(out, np.int32), INT32)
        ins = [shape, wt, x]
        if k % 3:
            if int8:
                bias = (r.integers(-2000, 2000, m)).astype(np.int32)
                sc = tuple(float(np.float32(qx.scale[0] * s)) for s in wscale)
                ins.append(Tensor([m], Quant(sc, (0,) * m), bias, type=INT32))
            else:
                ins.append(Tensor([m], None, r.uniform(-1, 1, m).astype(np.float32), type=FLOAT32))
        opts = ("TransposeConvOptions", {"Padding": padding, "StrideH": sh, "StrideW": sw,
                                         "FusedActivationFunction": ACTIVATIONS[act]})
        cases.append(Case(f"transpose_conv {xs} {out} k{kh}x{kw} s{sh}x{sw} pad {padding} "
                          f"{act} bias {len(ins) == 4}", TRANSPOSE_CONV, ins, y, opts, [values]))
    return cases
