"""The numpy reference of the operators of :mod:`tvmdev.model.math_ops`: elementwise math,
reductions, gather, clip by computed bounds and layer normalization, written from the
ONNX operator definitions in float64 (the C kernels compute in float32)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .resize_interp import interp_reference

Args = list[np.ndarray | None]
F64 = np.float64
_ERF = np.frompyfunc(math.erf, 1, 1)


def _arg(x: Args, i: int) -> np.ndarray:
    v = x[i]
    assert v is not None
    return v


def erf(v: np.ndarray) -> np.ndarray:
    """erf of every element (math.erf: numpy has none)."""
    return np.asarray(_ERF(np.asarray(v, F64)), F64)


def _gelu(x: Args, a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    if a["approximate"] == "tanh":
        return np.asarray(0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                                   * (v + 0.044715 * v ** 3))))
    return np.asarray(0.5 * v * (1.0 + erf(v / math.sqrt(2.0))))


def _clip_bounds(x: Args, a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    lo, hi = (x + [None, None])[1:3]
    if lo is not None:
        v = np.maximum(v, lo.reshape(()))
    if hi is not None:
        v = np.minimum(v, hi.reshape(()))
    return np.asarray(v)


def _reduce(fn: Callable[..., Any]) -> Callable[[Args, dict[str, Any]], np.ndarray]:
    def reduce(x: Args, a: dict[str, Any]) -> np.ndarray:
        axes = None if a["axes"] is None else tuple(a["axes"])
        return np.asarray(fn(_arg(x, 0), axis=axes, keepdims=bool(a["keepdims"])))
    return reduce


def _gather(x: Args, a: dict[str, Any]) -> np.ndarray:
    data, indices = _arg(x, 0), _arg(x, 1).astype(np.int64)
    n = data.shape[a["axis"]]
    if indices.size and (indices.min() < -n or indices.max() >= n):
        raise ValueError(f"gather: indices must be in [-{n}, {n}) (a dim of {n}), not "
                         f"{int(indices.min())} to {int(indices.max())}")
    return np.take(data, np.where(indices < 0, indices + n, indices), axis=a["axis"])


def _layer_norm(x: Args, a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    axes = tuple(range(a["axis"] % v.ndim, v.ndim))
    mean = v.mean(axis=axes, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (v - mean) / np.sqrt(var + a["epsilon"]) * _arg(x, 1)
    return np.asarray(y if len(x) < 3 or x[2] is None else y + x[2])


def _inv_std_dev(x: Args, a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    axes = tuple(range(a["axis"] % v.ndim, v.ndim))
    var = ((v - v.mean(axis=axes, keepdims=True)) ** 2).mean(axis=axes, keepdims=True)
    return np.asarray(1.0 / np.sqrt(var + a["epsilon"]))


MATH_REFERENCE: dict[str, Callable[[Args, dict[str, Any]], np.ndarray]] = {
    "sqrt": lambda x, a: np.sqrt(_arg(x, 0)),
    "exp": lambda x, a: np.exp(_arg(x, 0)),
    "log": lambda x, a: np.log(_arg(x, 0)),
    "neg": lambda x, a: np.negative(_arg(x, 0)),
    "abs": lambda x, a: np.abs(_arg(x, 0)),
    "erf": lambda x, a: erf(_arg(x, 0)),
    "gelu": _gelu,
    "pow": lambda x, a: np.power(_arg(x, 0), _arg(x, 1)),
    "clip_bounds": _clip_bounds,
    "reduce_max": _reduce(np.max),
    "reduce_min": _reduce(np.min),
    "reduce_sum": _reduce(np.sum),
    "reduce_prod": _reduce(np.prod),
    "gather": _gather,
    "layer_norm": _layer_norm,
    "inv_std_dev": _inv_std_dev,
    "resize": interp_reference,
}
