"""The seeded cases of each int8 operator (tests/test_s8_ops.py, tests/test_s8_kernels.py):
one-op TFLite models with tvmdev's params and numpy reference for each."""

from __future__ import annotations

import itertools

import numpy as np
from s8_cases import (
    ACTIVATIONS,
    ADD,
    AVERAGE_POOL_2D,
    CONCATENATION,
    INT32,
    LOGISTIC,
    MAX_POOL_2D,
    MEAN,
    MUL,
    PAD,
    PADV2,
    SOFTMAX,
    TANH,
    Case,
    Tensor,
    fixed_quant,
    rand_int8,
    rand_quant,
    rng,
)

from tvmdev.model.quant import Quant
from tvmdev.model.s8 import activations, concat, elementwise, mean, pad, pool, softmax
from tvmdev.model.windowed import resolve_window

BINARY_SHAPES = [([1, 4, 4, 3], [1, 4, 4, 3]), ([1, 4, 4, 3], [3]), ([2, 1, 3], [4, 1]),
                 ([7], [1]), ([1], [5]), ([2, 3, 4], [2, 1, 4]), ([3, 1, 2, 1], [1, 4, 1, 5]),
                 ([1, 1, 1, 2, 3], [2, 1, 3, 1, 1])]


def binary_cases(op: str, seed: int = 1) -> list[Case]:
    """ADD or MUL: every broadcast shape pair with every fused activation, random quant."""
    r = rng(seed)
    code, make, ref = ((ADD, elementwise.add_params, elementwise.add_reference)
                       if op == "add" else
                       (MUL, elementwise.mul_params, elementwise.mul_reference))
    cases = []
    for (sa, sb), act in itertools.product(BINARY_SHAPES, ACTIVATIONS):
        for _ in range(2):
            qa, qb, qo = rand_quant(r), rand_quant(r), rand_quant(r)
            if op == "add" and r.integers(4) == 0:
                qb = qa  # equal input scales (the multipliers tie)
            a, b = rand_int8(r, sa), rand_int8(r, sb)
            out = list(np.broadcast_shapes(tuple(sa), tuple(sb)))
            p = make([tuple(sa), tuple(sb)], tuple(out), act, qa, qb, qo)
            opts = ("AddOptions" if op == "add" else "MulOptions",
                    {"FusedActivationFunction": ACTIVATIONS[act]})
            cases.append(Case(f"{op} {sa} {sb} {act} {qa} {qb} {qo}", code,
                              [Tensor(sa, qa), Tensor(sb, qb)], Tensor(out, qo), opts,
                              [a, b], p, ref(a, b, p)))
    return cases


def _pool_out(size: int, k: int, stride: int, same: bool) -> int:
    return -(-size // stride) if same else (size - k + stride) // stride


def pool_cases(op: str, seed: int = 2, count: int = 48) -> list[Case]:
    """AVERAGE_POOL_2D or MAX_POOL_2D: random sizes, filters, strides, SAME and VALID,
    every fused activation; input and output share their quantization."""
    r = rng(seed)
    cases = []
    for i in range(count):
        n, h, w, c = int(r.integers(1, 3)), int(r.integers(1, 9)), int(r.integers(1, 9)), \
            int(r.integers(1, 6))
        kh, kw = int(r.integers(1, min(h, 4) + 1)), int(r.integers(1, min(w, 4) + 1))
        sh, sw = int(r.integers(1, 4)), int(r.integers(1, 4))
        same = bool(i % 2)
        act = list(ACTIVATIONS)[i % 4]
        q = rand_quant(r)
        oh, ow = _pool_out(h, kh, sh, same), _pool_out(w, kw, sw, same)
        attrs = resolve_window(op, [(n, h, w, c)], {
            "kernel_shape": (kh, kw), "strides": (sh, sw), "pads": (), "layout": "NHWC",
            "auto_pad": "SAME_UPPER" if same else "VALID", "dilations": (1, 1),
            "count_include_pad": 0, "ceil_mode": 0})
        p = pool.params([(n, h, w, c)], (n, oh, ow, c), attrs, act, q, q)
        x = rand_int8(r, (n, h, w, c))
        ref = (pool.avg_reference if op == "avgpool2d" else pool.max_reference)(x, p)
        opts = ("Pool2DOptions", {"Padding": 0 if same else 1, "StrideW": sw, "StrideH": sh,
                                  "FilterWidth": kw, "FilterHeight": kh,
                                  "FusedActivationFunction": ACTIVATIONS[act]})
        code = AVERAGE_POOL_2D if op == "avgpool2d" else MAX_POOL_2D
        cases.append(Case(f"{op} {[n, h, w, c]} k{kh}x{kw} s{sh}x{sw} "
                          f"{'SAME' if same else 'VALID'} {act} {q}", code,
                          [Tensor([n, h, w, c], q)], Tensor([n, oh, ow, c], q), opts, [x],
                          p, ref))
    return cases


SOFTMAX_SHAPES = [[1, 1], [1, 2], [1, 5], [1, 10], [2, 33], [1, 100], [1, 1000], [2, 3, 7],
                  [1, 2, 2, 12]]
SOFTMAX_SCALES = [1e-3, 1 / 64, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0, 9.0, 20.0]


def softmax_cases(seed: int = 3) -> list[Case]:
    """SOFTMAX over the last axis: several sizes and input scales (from values that all
    survive to ones where only the row's maximum does), beta 1 and others; the output is
    TFLM's only int8 choice, 1/256 and -128."""
    r = rng(seed)
    qo = fixed_quant(1 / 256, -128)
    cases = []
    for shape, scale in itertools.product(SOFTMAX_SHAPES, SOFTMAX_SCALES):
        qi = fixed_quant(scale, int(r.integers(-128, 128)))
        beta = float(np.float32([1.0, 1.0, 0.5, 2.0][int(r.integers(4))]))
        x = rand_int8(r, shape)
        if r.integers(3) == 0:  # a narrow spread of values
            x = np.clip(x // 8, -128, 127).astype(np.int8)
        p = softmax.params(tuple(shape), beta, qi, qo)
        try:
            ref = softmax.reference(x, p)
        except ValueError:  # TFLM aborts (tested with the kernel)
            continue
        cases.append(Case(f"softmax {shape} beta {beta} {qi}", SOFTMAX,
                          [Tensor(shape, qi)], Tensor(shape, qo),
                          ("SoftmaxOptions", {"Beta": beta}), [x], p, ref))
    return cases


ACT_SCALES = [1e-3, 0.01, 1 / 32, 0.05, 0.1, 0.12, 0.25, 0.5, 1.0, 4.0, 10.0]


def activation_cases(op: str, seed: int = 4) -> list[Case]:
    """LOGISTIC or TANH on every int8 value, for several input scales and zero points,
    with the output quantization TFLite uses (1/256, -128 and 1/128, 0)."""
    r = rng(seed)
    qo = fixed_quant(1 / 256, -128) if op == "sigmoid" else fixed_quant(1 / 128, 0)
    make, ref = ((activations.sigmoid_params, activations.sigmoid_reference)
                 if op == "sigmoid" else
                 (activations.tanh_params, activations.tanh_reference))
    cases = []
    for scale in ACT_SCALES:
        for zp in (0, int(r.integers(-128, 128))):
            qi = fixed_quant(scale, zp)
            x = np.arange(-128, 128, dtype=np.int64).astype(np.int8).reshape(1, 16, 16)
            p = make((1, 16, 16), qi, qo)
            cases.append(Case(f"{op} {qi}", LOGISTIC if op == "sigmoid" else TANH,
                              [Tensor([1, 16, 16], qi)], Tensor([1, 16, 16], qo), None,
                              [x], p, ref(x, p)))
    # TFLM computes the same values whatever else the output's quantization says.
    odd = fixed_quant(1 / 100, -128) if op == "sigmoid" else fixed_quant(0.3, 17)
    x = np.arange(-128, 128, dtype=np.int64).astype(np.int8).reshape(2, 128)
    qi = fixed_quant(0.07, 3)
    p = make((2, 128), qi, odd)
    cases.append(Case(f"{op} {qi} into {odd}", LOGISTIC if op == "sigmoid" else TANH,
                      [Tensor([2, 128], qi)], Tensor([2, 128], odd), None, [x], p, ref(x, p)))
    return cases


PAD_SHAPES = [[5], [3, 4], [2, 3, 4], [1, 3, 3, 2], [2, 2, 3, 2]]


def pad_cases(seed: int = 5) -> list[Case]:
    """PAD (the output zero point) and PADV2 (a constant): paddings on every axis."""
    r = rng(seed)
    cases = []
    for shape, v2 in itertools.product(PAD_SHAPES, (False, True)):
        for _ in range(3):
            q = rand_quant(r)
            pads = r.integers(0, 3, size=(len(shape), 2))
            out = [d + int(b) + int(e) for d, (b, e) in zip(shape, pads, strict=True)]
            x = rand_int8(r, shape)
            ins = [Tensor(shape, q), Tensor([len(shape), 2], None,
                                            pads.astype(np.int32), INT32)]
            value = None
            if v2:
                value = int(r.integers(-128, 128))
                ins.append(Tensor([1], q, np.array([value], np.int8)))
            flat = tuple(int(v) for v in (*pads[:, 0], *pads[:, 1]))
            p = pad.params([tuple(shape)], tuple(out), flat, q, value, q if v2 else None)
            cases.append(Case(f"{'padv2' if v2 else 'pad'} {shape} {pads.tolist()} {q}",
                              PADV2 if v2 else PAD, ins, Tensor(out, q), None, [x], p,
                              pad.reference(x, p)))
    return cases


MEAN_SHAPES = [[1, 4, 4, 3], [2, 5, 3, 8], [1, 7, 7, 16], [1, 1, 1, 4], [1, 13, 9, 2]]


def mean_cases(seed: int = 6) -> list[Case]:
    """MEAN over H, W (axes [1, 2]), keep_dims true and false, and a few other axes, with
    input and output quantized alike and differently."""
    r = rng(seed)
    cases = []
    axes_list: list[tuple[int, ...]] = [(1, 2), (1, 2), (2, 1), (3,), (0, 1, 2, 3)]
    for shape, axes, keep in itertools.product(MEAN_SHAPES, axes_list, (True, False)):
        qi = rand_quant(r)
        spread = 2.0 ** [2, 2, 2, 12, 24][len(cases) % 5]  # and far apart
        qo = qi if r.integers(3) == 0 else rand_quant(r, qi.scale[0] / spread,
                                                      qi.scale[0] * spread)
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
            [d for i, d in enumerate(shape) if i not in axes]
        x = rand_int8(r, shape)
        p = mean.params([tuple(shape)], tuple(out), axes, keep, qi, qo)
        ins = [Tensor(shape, qi), Tensor([len(axes)], None, np.array(axes, np.int32), INT32)]
        cases.append(Case(f"mean {shape} axes {list(axes)} keep {keep} {qi} {qo}", MEAN,
                          ins, Tensor(out, qo), ("ReducerOptions", {"KeepDims": keep}),
                          [x], p, mean.reference(x, axes, keep, p)))
    return cases


def concat_cases(seed: int = 7) -> list[Case]:
    """CONCATENATION of 1 to 4 tensors along each axis, all quantized as the output."""
    r = rng(seed)
    cases = []
    for rank, n in itertools.product((1, 2, 3, 4), (1, 2, 3, 4)):
        for axis in range(-rank, rank):
            q = rand_quant(r)
            base = [int(v) for v in r.integers(1, 4, size=rank)]
            shapes = [[int(r.integers(1, 4)) if d == axis % rank else v
                       for d, v in enumerate(base)] for _ in range(n)]
            xs = [rand_int8(r, s) for s in shapes]
            out = list(base)
            out[axis % rank] = sum(s[axis % rank] for s in shapes)
            p = concat.params([tuple(s) for s in shapes], tuple(out), axis, [q] * n, q)
            cases.append(Case(f"concat {shapes} axis {axis} {q}", CONCATENATION,
                              [Tensor(s, q) for s in shapes], Tensor(out, q),
                              ("ConcatenationOptions", {"Axis": axis}), xs, p,
                              concat.reference(xs, axis)))
    return cases


def concat_mismatch(seed: int = 8) -> tuple[Case, list[Quant]]:
    """A concatenation whose second input is quantized differently from the output."""
    r = rng(seed)
    q, q2 = rand_quant(r), rand_quant(r)
    xs = [rand_int8(r, (1, 3)), rand_int8(r, (1, 2))]
    case = Case("concat mismatch", CONCATENATION, [Tensor([1, 3], q), Tensor([1, 2], q2)],
                Tensor([1, 5], q), ("ConcatenationOptions", {"Axis": 1}), xs)
    return case, [q, q2, q]


def refused_cases() -> list[tuple[Case, str]]:
    """One-op models TFLM refuses at allocation, each with the message tvmdev's params
    give for the same quantization: pooling, PADV2, softmax and logistic outputs
    quantized as TFLM does not allow."""
    q1, q2 = fixed_quant(0.1, 3), fixed_quant(0.2, 3)
    x = np.zeros((1, 4, 4, 2), np.int8)
    shape = [1, 4, 4, 2]
    pool_opts = ("Pool2DOptions", {"Padding": 1, "StrideW": 2, "StrideH": 2,
                                   "FilterWidth": 2, "FilterHeight": 2})
    paddings = Tensor([4, 2], None, np.ones((4, 2), np.int32), INT32)
    return [
        (Case("avgpool requantizing", AVERAGE_POOL_2D, [Tensor(shape, q1)],
              Tensor([1, 2, 2, 2], q2), pool_opts, [x]), "quantized as the input"),
        (Case("padv2 constant unlike the output", PADV2,
              [Tensor(shape, q1), paddings, Tensor([1], q2, np.array([5], np.int8))],
              Tensor([3, 6, 6, 4], q1), None, [x]), "quantized as the output"),
        (Case("softmax into 1/128", SOFTMAX, [Tensor(shape, q1)],
              Tensor(shape, fixed_quant(1 / 128, -128)), ("SoftmaxOptions", {"Beta": 1.0}),
              [x]), "1/256"),
        (Case("logistic into zero point 0", LOGISTIC, [Tensor(shape, q1)],
              Tensor(shape, fixed_quant(1 / 256, 0)), None, [x]), "-128"),
    ]


def refused_params(case: Case) -> None:
    """tvmdev's params for a case of ``refused_cases`` (raises ValueError)."""
    qi, qo = case.inputs[0].quant, case.output.quant
    assert qi is not None and qo is not None
    shape = tuple(case.inputs[0].shape)
    if case.code == AVERAGE_POOL_2D:
        attrs = resolve_window("avgpool2d", [shape], {
            "kernel_shape": (2, 2), "strides": (2, 2), "pads": (), "layout": "NHWC",
            "auto_pad": "VALID", "dilations": (1, 1), "count_include_pad": 0})
        pool.params([shape], tuple(case.output.shape), attrs, "NONE", qi, qo)
    elif case.code == PADV2:
        pad.params([shape], tuple(case.output.shape), (1,) * 8, qo, 5, case.inputs[2].quant)
    elif case.code == SOFTMAX:
        softmax.params(shape, 1.0, qi, qo)
    else:
        activations.sigmoid_params(shape, qi, qo)
