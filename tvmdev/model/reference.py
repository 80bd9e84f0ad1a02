"""An independent numpy implementation of the operators, for checking the C output.

Written from the ONNX operator definitions, not from the C kernels: computed in float64
with numpy's own primitives, then rounded to float32 once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .graph import Model

F64 = np.float64


def _gemm(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    A, B, C = (x + [None])[:3]
    assert A is not None and B is not None
    A = A.T if a["transA"] else A
    B = B.T if a["transB"] else B
    y = a["alpha"] * (A @ B)
    if C is not None:
        y = y + a["beta"] * C
    return np.asarray(y)


def _matmul(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    assert x[0] is not None and x[1] is not None
    return np.asarray(np.matmul(x[0], x[1]))


def _softmax(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = x[0]
    assert v is not None
    e = np.exp(v - v.max(axis=a["axis"], keepdims=True))
    return np.asarray(e / e.sum(axis=a["axis"], keepdims=True))


def _reshape(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = x[0]
    assert v is not None
    shape = [v.shape[i] if d == 0 else d for i, d in enumerate(a["shape"])]
    return v.reshape(shape)


def _flatten(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = x[0]
    assert v is not None
    axis = a["axis"] + v.ndim if a["axis"] < 0 else a["axis"]
    return v.reshape(int(np.prod(v.shape[:axis])), -1)


def _pad_nchw(v: np.ndarray, pads: tuple[int, ...], value: float) -> np.ndarray:
    pt, pl, pb, pr = pads
    return np.pad(v, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=value)


def _windows(v: np.ndarray, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int,
             oh: int, ow: int) -> np.ndarray:
    """N x C x OH x OW x KH x KW view of the (padded) input's windows."""
    n, c, h, w = v.shape
    need_h = (oh - 1) * sh + dh * (kh - 1) + 1
    need_w = (ow - 1) * sw + dw * (kw - 1) + 1
    if need_h > h or need_w > w:  # ceil_mode windows reach past the padding
        v = np.pad(v, ((0, 0), (0, 0), (0, max(0, need_h - h)), (0, max(0, need_w - w))),
                   constant_values=np.nan)
    s = v.strides
    return np.lib.stride_tricks.as_strided(
        v, (n, c, oh, ow, kh, kw), (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw),
        writeable=False)


def _conv2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
            ) -> np.ndarray:
    X, W, B = (x + [None])[:3]
    assert X is not None and W is not None
    g = a["group"]
    m, cg, kh, kw = W.shape
    xp = _pad_nchw(X, a["pads"], 0.0)
    oh, ow = out_shape[2], out_shape[3]
    (sh, sw), (dh, dw) = a["strides"], a["dilations"]
    win = _windows(xp, kh, kw, sh, sw, dh, dw, oh, ow)
    outs = []
    mg = m // g
    for gi in range(g):
        wg = W[gi * mg:(gi + 1) * mg]                       # mg, cg, kh, kw
        xg = win[:, gi * cg:(gi + 1) * cg]                 # n, cg, oh, ow, kh, kw
        outs.append(np.einsum("nchwij,mcij->nmhw", xg, wg))
    y = np.concatenate(outs, axis=1)
    if B is not None:
        y = y + B.reshape(1, -1, 1, 1)
    return y


def _maxpool2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
               ) -> np.ndarray:
    X = x[0]
    assert X is not None
    kh, kw = a["kernel_shape"]
    xp = _pad_nchw(X, a["pads"], np.nan)
    (sh, sw), (dh, dw) = a["strides"], a["dilations"]
    win = _windows(xp, kh, kw, sh, sw, dh, dw, out_shape[2], out_shape[3])
    return np.asarray(np.nanmax(win, axis=(4, 5)))


def _avgpool2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
               ) -> np.ndarray:
    X = x[0]
    assert X is not None
    kh, kw = a["kernel_shape"]
    oh, ow = out_shape[2], out_shape[3]
    # Values: zero in the padding, NaN past it. Counts: which positions are counted.
    xp = _pad_nchw(X, a["pads"], 0.0)
    inside = _pad_nchw(np.ones_like(X), a["pads"], 1.0 if a["count_include_pad"] else 0.0)
    sh, sw = a["strides"]
    win = _windows(xp, kh, kw, sh, sw, 1, 1, oh, ow)
    cnt = _windows(inside, kh, kw, sh, sw, 1, 1, oh, ow)
    total = np.nansum(win, axis=(4, 5))
    count = np.nansum(cnt, axis=(4, 5))
    return np.asarray(total / count)


def _arg(x: list[np.ndarray | None], i: int) -> np.ndarray:
    v = x[i]
    assert v is not None
    return v


_SIMPLE: dict[str, Callable[[list[np.ndarray | None], dict[str, Any]], np.ndarray]] = {
    "gemm": _gemm,
    "matmul": _matmul,
    "add": lambda x, a: np.add(_arg(x, 0), _arg(x, 1)),
    "mul": lambda x, a: np.multiply(_arg(x, 0), _arg(x, 1)),
    "relu": lambda x, a: np.maximum(_arg(x, 0), 0.0),
    "sigmoid": lambda x, a: 1.0 / (1.0 + np.exp(-_arg(x, 0))),
    "tanh": lambda x, a: np.tanh(_arg(x, 0)),
    "softmax": _softmax,
    "reshape": _reshape,
    "flatten": _flatten,
    "transpose": lambda x, a: np.transpose(_arg(x, 0), a["perm"]),
}
_WINDOWED = {"conv2d": _conv2d, "maxpool2d": _maxpool2d, "avgpool2d": _avgpool2d}


def evaluate(model: Model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor's value (inputs, constants, intermediates, outputs) as float32."""
    values: dict[str, np.ndarray] = {k: np.asarray(v, F64) for k, v in inputs.items()}
    values.update({k: v.astype(F64) for k, v in model.constants.items()})
    out: dict[str, np.ndarray] = {}
    # NaN and infinities in the inputs propagate as IEEE arithmetic says, without warnings.
    with np.errstate(all="ignore"):
        for op in model.operators:
            args = [values[t] if t is not None else None for t in op.inputs]
            attrs = op.attr_dict
            shape = model.tensors[op.outputs[0]].shape
            if op.op in _WINDOWED:
                y = _WINDOWED[op.op](args, attrs, shape)
            else:
                y = _SIMPLE[op.op](args, attrs)
            y = np.asarray(y, F64).reshape(shape)
            values[op.outputs[0]] = y
        for k, v in values.items():
            out[k] = v.astype(np.float32)
    return out


def random_inputs(model: Model, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs in [-1, 1), one array per model input."""
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-1.0, 1.0, model.tensors[name].shape).astype(np.float32)
            for name in model.inputs}
