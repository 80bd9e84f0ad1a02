"""An independent numpy implementation of the operators, for checking the C output.

Written from the ONNX operator definitions, not from the C kernels: computed in float64
with numpy's own primitives, then rounded to float32 once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import TvmdevError
from .graph import Model, Operator
from .ops import QUANT_OPS, quantized_forms
from .reference_math import MATH_REFERENCE
from .resize import resize_reference
from .s8.call import QUANTIZED, S8Call
from .taps import Tap, counts, taps

F64 = np.float64

INT_DTYPES = ("int8", "int16", "int32", "int64")


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


def _log_softmax(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    d = v - v.max(axis=a["axis"], keepdims=True)
    return np.asarray(d - np.log(np.exp(d).sum(axis=a["axis"], keepdims=True)))


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


# Fused activations (TFLite's fused_activation_function).
_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "NONE": lambda v: v,
    "RELU": lambda v: np.maximum(v, 0.0),
    "RELU6": lambda v: np.minimum(np.maximum(v, 0.0), 6.0),
    "RELU_N1_TO_1": lambda v: np.minimum(np.maximum(v, -1.0), 1.0),
    "TANH": np.tanh,
}


def _nchw(v: np.ndarray, layout: str) -> np.ndarray:
    """An NHWC tensor as NCHW (a view); NCHW as it is."""
    return v.transpose(0, 3, 1, 2) if layout == "NHWC" else v


def _in_layout(v: np.ndarray, layout: str) -> np.ndarray:
    """An NCHW result in ``layout``."""
    return v.transpose(0, 2, 3, 1) if layout == "NHWC" else v


def _taps(x: np.ndarray, a: dict[str, Any], k: tuple[int, int], out: tuple[int, int]
          ) -> tuple[list[Tap], list[Tap]]:
    """The taps of the window along H and W that meet NCHW ``x`` (:mod:`.taps`)."""
    pt, pl, _, _ = a["pads"]
    return (taps(x.shape[2], k[0], a["strides"][0], a["dilations"][0], pt, out[0]),
            taps(x.shape[3], k[1], a["strides"][1], a["dilations"][1], pl, out[1]))


def _out_hw(out_shape: tuple[int, ...], layout: str) -> tuple[int, int]:
    return (out_shape[1], out_shape[2]) if layout == "NHWC" else (out_shape[2], out_shape[3])


def _conv2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
            ) -> np.ndarray:
    """Each output the sum over its window's taps inside the input (the padding is 0)."""
    X, W, B = (x + [None])[:3]
    assert X is not None and W is not None
    g, layout = a["group"], a["layout"]
    xv = _nchw(X, layout)
    w = W.transpose(0, 3, 1, 2) if layout == "NHWC" else W  # M, C / group, KH, KW
    (n, _, h, wd), (m, cg, kh, kw) = xv.shape, w.shape
    oh, ow = _out_hw(out_shape, layout)
    xg, wg = xv.reshape(n, g, cg, h, wd), w.reshape(g, m // g, cg, kh, kw)
    y = np.zeros((n, g, m // g, oh, ow))
    th, tw = _taps(xv, a, (kh, kw), (oh, ow))
    for i in th:
        for j in tw:
            y[:, :, :, i.outs, j.outs] += np.einsum(
                "ngchw,gmc->ngmhw", xg[:, :, :, i.ins, j.ins], wg[:, :, :, i.tap, j.tap])
    y = y.reshape(n, m, oh, ow)
    if B is not None:
        y = y + B.reshape(1, -1, 1, 1)
    return _in_layout(y, layout)


def _depthwise_conv2d(x: list[np.ndarray | None], a: dict[str, Any],
                      out_shape: tuple[int, ...]) -> np.ndarray:
    """TFLite DEPTHWISE_CONV_2D: output channel c * mult + j from input channel c."""
    X, W, B = (x + [None])[:3]
    assert X is not None and W is not None
    xv = np.repeat(_nchw(X, "NHWC"), a["depth_multiplier"], axis=1)  # n, c * mult, h, w
    oh, ow = out_shape[1], out_shape[2]
    y = np.zeros((xv.shape[0], xv.shape[1], oh, ow))
    th, tw = _taps(xv, a, W.shape[1:3], (oh, ow))
    for i in th:
        for j in tw:
            y[:, :, i.outs, j.outs] += xv[:, :, i.ins, j.ins] * W[0, i.tap, j.tap, :, None, None]
    y = _in_layout(y, "NHWC")
    return y if B is None else y + B


def _along(v: np.ndarray, axis: int, found: list[Tap], out: int, init: float,
           combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """``v`` reduced along ``axis`` over each output's taps (``init`` where none)."""
    shape = list(v.shape)
    shape[axis] = out
    y = np.full(shape, init)
    pre = (slice(None),) * axis
    for t in found:
        outs, ins = (*pre, t.outs), (*pre, t.ins)
        y[outs] = combine(y[outs], v[ins])
    return y


def _pool(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...],
          init: float, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
          ) -> tuple[np.ndarray, tuple[int, int]]:
    """A box window reduced over H, then over W (separably), NCHW; and (OH, OW)."""
    X = x[0]
    assert X is not None
    xv = _nchw(X, a["layout"])
    hw = _out_hw(out_shape, a["layout"])
    th, tw = _taps(xv, a, a["kernel_shape"], hw)
    rows = _along(xv, 2, th, hw[0], init, combine)
    return _along(rows, 3, tw, hw[1], init, combine), hw


def _maxpool2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
               ) -> np.ndarray:
    """The largest of the taps inside the input (NaN is skipped; none: NaN)."""
    y, _ = _pool(x, a, out_shape, np.nan, np.fmax)
    return _in_layout(y, a["layout"])


def _avgpool2d(x: list[np.ndarray | None], a: dict[str, Any], out_shape: tuple[int, ...]
               ) -> np.ndarray:
    """The sum of the taps inside the input over their count, or (count_include_pad)
    over the count of taps inside the padded input."""
    assert x[0] is not None
    h, w = _nchw(x[0], a["layout"]).shape[2:]
    y, (oh, ow) = _pool(x, a, out_shape, 0.0, np.add)
    pt, pl, pb, pr = a["pads"] if a["count_include_pad"] else (0, 0, 0, 0)
    (kh, kw), (sh, sw), (dh, dw) = a["kernel_shape"], a["strides"], a["dilations"]
    ch = counts(kh, sh, dh, a["pads"][0], oh, -pt, h + pb)
    cw = counts(kw, sw, dw, a["pads"][1], ow, -pl, w + pr)
    return _in_layout(y / (ch[:, None] * cw[None, :]), a["layout"])


def _fully_connected(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    X, W, B = (x + [None])[:3]
    assert X is not None and W is not None
    y = np.asarray(X.reshape(-1, W.shape[1]) @ W.T)
    return y if B is None else y + B


def _pad(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    pads = a["pads"]
    widths = list(zip(pads[:v.ndim], pads[v.ndim:], strict=True))
    return np.pad(v, widths, mode="constant", constant_values=a["value"])


def _mean(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    axes = None if a["axes"] is None else tuple(a["axes"])
    return np.asarray(np.mean(v, axis=axes, keepdims=bool(a["keepdims"])))


def _global_average_pool(x: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    v = _arg(x, 0)
    return np.asarray(v.mean(axis=tuple(range(2, v.ndim)), keepdims=True))


def _arg(x: list[np.ndarray | None], i: int) -> np.ndarray:
    v = x[i]
    assert v is not None
    return v


_SIMPLE: dict[str, Callable[[list[np.ndarray | None], dict[str, Any]], np.ndarray]] = {
    "gemm": _gemm,
    "matmul": _matmul,
    "add": lambda x, a: np.add(_arg(x, 0), _arg(x, 1)),
    "mul": lambda x, a: np.multiply(_arg(x, 0), _arg(x, 1)),
    "sub": lambda x, a: np.subtract(_arg(x, 0), _arg(x, 1)),
    "maximum": lambda x, a: np.maximum(_arg(x, 0), _arg(x, 1)),
    "minimum": lambda x, a: np.minimum(_arg(x, 0), _arg(x, 1)),
    "relu": lambda x, a: np.maximum(_arg(x, 0), 0.0),
    "sigmoid": lambda x, a: 1.0 / (1.0 + np.exp(-_arg(x, 0))),
    "tanh": lambda x, a: np.tanh(_arg(x, 0)),
    "softmax": _softmax,
    "reshape": _reshape,
    "flatten": _flatten,
    "transpose": lambda x, a: np.transpose(_arg(x, 0), a["perm"]),
    "fully_connected": _fully_connected,
    "clip": lambda x, a: np.minimum(np.maximum(_arg(x, 0), a["min"]), a["max"]),
    "relu6": lambda x, a: np.minimum(np.maximum(_arg(x, 0), 0.0), 6.0),
    "pad": _pad,
    "mean": _mean,
    "global_average_pool": _global_average_pool,
    "concat": lambda x, a: np.concatenate([v for v in x if v is not None], axis=a["axis"]),
    "leaky_relu": lambda x, a: np.where(_arg(x, 0) > 0, _arg(x, 0), _arg(x, 0) * a["alpha"]),
    "hard_swish": lambda x, a: _arg(x, 0) * np.clip(_arg(x, 0) + 3.0, 0.0, 6.0) / 6.0,
    "log_softmax": _log_softmax,
    "resize_nearest": lambda x, a: resize_reference(_arg(x, 0), a),
    **MATH_REFERENCE,
}
_WINDOWED = {"conv2d": _conv2d, "depthwise_conv2d": _depthwise_conv2d,
             "maxpool2d": _maxpool2d, "avgpool2d": _avgpool2d}


def _windowed(op: str, args: list[np.ndarray | None], attrs: dict[str, Any],
              shape: tuple[int, ...]) -> np.ndarray:
    """A windowed op; a 1-D one (rank-3 X and W) as the 2-D one with H = 1."""
    if len(shape) == 3:
        axis = 1 if attrs.get("layout") == "NHWC" else 2
        args = [np.expand_dims(v, axis) if v is not None and v.ndim == 3 else v
                for v in args]
        shape = (*shape[:axis], 1, *shape[axis:])
    return _WINDOWED[op](args, attrs, shape)


def _s8(model: Model, op: Operator, args: list[np.ndarray | None]) -> np.ndarray:
    """An int8 operator (or quantize, dequantize) by its int8 form's integer reference."""
    ts = [model.tensors[t] if t is not None else None for t in op.inputs]
    out = model.tensors[op.outputs[0]]
    call = S8Call([t.shape if t else None for t in ts], out.shape, op.attr_dict,
                  [t.dtype if t else None for t in ts] + [out.dtype],
                  [t.quant if t else None for t in ts] + [out.quant])
    return quantized_forms(model.op_dtype(op))[op.op].reference(call, args)


def _s8_checked(model: Model, op: Operator, args: list[Any]) -> np.ndarray:
    """The int8 form's reference, its refusal for these inputs (an accumulator beyond
    int32, a softmax row TFLM aborts on) as one line naming the operator."""
    try:
        return np.asarray(_s8(model, op, args))
    except (ValueError, ArithmeticError) as exc:
        raise TvmdevError(f"operator '{op.name}' ({op.op}): these inputs take it where "
                          f"TFLM's integer kernels overflow or abort: {exc}", op.where,
                          hint="the numpy reference computes int8 as TFLM does and stops "
                               "there; run other inputs (--inputs DIR) or change the "
                               "model's quantization") from None


def evaluate(model: Model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor's value (inputs, constants, intermediates, outputs) in its dtype:
    float32, or int8 and int32 (computed by the int8 forms' integer references)."""
    values: dict[str, np.ndarray] = {k: np.asarray(v, F64) for k, v in inputs.items()}
    # int64 constants (16x8 biases) stay exact; the others as float64
    values.update({k: v if v.dtype == np.int64 else v.astype(F64)
                   for k, v in model.constants.items()})
    out: dict[str, np.ndarray] = {}
    # NaN and infinities in the inputs propagate as IEEE arithmetic says, without warnings.
    with np.errstate(all="ignore"):
        for op in model.operators:
            args = [values[t] if t is not None else None for t in op.inputs]
            attrs = op.attr_dict
            shape = model.tensors[op.outputs[0]].shape
            if op.op in QUANT_OPS or model.op_dtype(op) in QUANTIZED:
                values[op.outputs[0]] = np.asarray(_s8_checked(model, op, args), F64)
                continue
            if op.op in _WINDOWED:
                y = _windowed(op.op, args, attrs, shape)
            else:
                y = _SIMPLE[op.op](args, attrs)
            y = _ACTIVATIONS[attrs.get("activation", "NONE")](np.asarray(y, F64))
            y = np.asarray(y, F64).reshape(shape)
            values[op.outputs[0]] = y
        for k, v in values.items():
            out[k] = v.astype(np.dtype(model.tensors[k].dtype)
                              if model.tensors[k].dtype in INT_DTYPES else np.float32)
    return out


def input_range(model: Model, name: str) -> tuple[float, float]:
    """The range seeded inputs are drawn from: [-1, 1), or for a float input that is
    quantized, the range its quantization spans."""
    for op in model.operators:
        if op.op == "quantize" and op.inputs[0] == name:
            q = model.tensors[op.outputs[0]].quant
            if q is not None:
                info = np.iinfo(model.tensors[op.outputs[0]].dtype)
                return (q.scale[0] * (info.min - q.zero_point[0]),
                        q.scale[0] * (info.max - q.zero_point[0]))
    return -1.0, 1.0


def index_range(model: Model, name: str) -> tuple[int, int]:
    """The values an int32 input may hold, [lo, hi): the indices every gather reading it
    takes ([-n, n) along a dim of n), else int32's."""
    lo, hi = -(1 << 31), 1 << 31
    for op in model.operators:
        if op.op == "gather" and op.inputs[1] == name:
            data = model.tensors[str(op.inputs[0])].shape
            n = data[op.attr_dict["axis"] % len(data)]
            lo, hi = max(lo, -n), min(hi, n)
    return lo, hi


def random_inputs(model: Model, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs, one array per model input: int8 and int16 ones over their dtype's
    range, int32 ones
    over :func:`index_range` (at most [-128, 128)), float32 ones over
    :func:`input_range`."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in model.inputs:
        t = model.tensors[name]
        if t.dtype in ("int8", "int16"):
            info = np.iinfo(t.dtype)
            out[name] = rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype)
        elif t.dtype == "int32" and t.quant is not None:  # quantized (requantized to int16)
            out[name] = rng.integers(-(1 << 15), 1 << 15, t.shape).astype(np.int32)
        elif t.dtype == "int32":
            first, end = index_range(model, name)
            out[name] = rng.integers(max(first, -128), min(end, 128), t.shape).astype(np.int32)
        else:
            lo, hi = input_range(model, name)
            out[name] = rng.uniform(lo, hi, t.shape).astype(np.float32)
    return out
