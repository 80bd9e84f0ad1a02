"""An independent numpy implementation of the operators, for checking the C output.

Written from the ONNX operator definitions, not from the C kernels: computed in float64
with numpy's own primitives, then rounded to float32 once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import TvmdevError
from .custom import CUSTOM
from .graph import Model, Operator
from .inputs import index_range as index_range  # re-exported: callers import it here
from .inputs import input_range as input_range
from .inputs import random_inputs as random_inputs
from .ops import OPS, QUANT_OPS, quantized_forms
from .rawint.evaluate import raw_reference
from .recurrent import FLOAT_REFERENCE
from .reference_math import MATH_REFERENCE
from .resize import resize_reference
from .resize_bilinear import bilinear_reference
from .s8.call import QUANTIZED, S8Call
from .s8.table import S8_STATEFUL
from .slicing import strided_slice_reference
from .taps import Tap, counts, taps
from .transpose_conv import transpose_conv_reference
from .values import INT_DTYPES, State, reset_state, stored

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
    """The largest of the taps inside the input, NaN skipped; where there is none (a
    window wholly in the padding, or all NaN), float32's lowest value, as TFLite's and
    ONNX Runtime's kernels start their maximum there (the C kernel does too)."""
    y, _ = _pool(x, a, out_shape, float(np.finfo(np.float32).min), np.fmax)
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
    "div": lambda x, a: np.divide(_arg(x, 0), _arg(x, 1)),
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
    "resize_bilinear": lambda x, a: bilinear_reference(_arg(x, 0), a),
    "transpose_conv2d": lambda x, a: transpose_conv_reference(
        x, a, [v.shape if v is not None else None for v in x]),
    "strided_slice": lambda x, a: strided_slice_reference(_arg(x, 0), a),
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


def _call(model: Model, op: Operator) -> S8Call:
    ts = [model.tensors[t] if t is not None else None for t in op.inputs]
    out = model.tensors[op.outputs[0]]
    return S8Call([t.shape if t else None for t in ts], out.shape, op.attr_dict,
                  [t.dtype if t else None for t in ts] + [out.dtype],
                  [t.quant if t else None for t in ts] + [out.quant])


def _s8(model: Model, op: Operator, args: list[np.ndarray | None]) -> np.ndarray:
    """An int8 or int16 operator (or quantize, dequantize) by its integer form's
    reference."""
    return quantized_forms(model.op_dtype(op))[op.op].reference(_call(model, op), args)


def _checked(op: Operator, fn: Callable[[], Any]) -> Any:
    """An int8 form's reference, its refusal for these inputs (an accumulator beyond
    int32, a softmax row TFLM aborts on) as one line naming the operator."""
    try:
        return fn()
    except (ValueError, ArithmeticError) as exc:
        raise TvmdevError(f"operator '{op.name}' ({op.op}): these inputs take it where "
                          f"TFLM's integer kernels overflow or abort: {exc}", op.where,
                          hint="the numpy reference computes int8 as TFLM does and stops "
                               "there; run other inputs (--inputs DIR) or change the "
                               "model's quantization") from None


def _s8_checked(model: Model, op: Operator, args: list[Any]) -> np.ndarray:
    return np.asarray(_checked(op, lambda: _s8(model, op, args)))


def _stateful(model: Model, op: Operator, args: list[np.ndarray | None]
              ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """An op with state: its output and its state tensors' new values."""
    names = [t for a, t in zip(OPS[op.op].inputs, op.inputs, strict=False)
             if a in OPS[op.op].states and t is not None]
    if model.op_dtype(op) == "int8":
        y, new = _checked(op, lambda: S8_STATEFUL[op.op](_call(model, op), args))
    else:
        y, new = FLOAT_REFERENCE[op.op](args, op.attr_dict)
    return np.asarray(y, F64), {n: np.asarray(v, F64) for n, v in zip(names, new, strict=True)}


def _raw(model: Model, op: Operator, args: list[np.ndarray | None],
         values: dict[str, np.ndarray]) -> None:
    """An operator in its raw-integer form; a state it updates takes the output's value."""
    values[op.outputs[0]] = y = raw_reference(model, op, args)
    for a, t in zip(OPS[op.op].inputs, op.inputs, strict=False):
        if a in OPS[op.op].states and t is not None:
            values[t] = stored(model, t, y)


# An operator's reference computed elsewhere (a custom op's C kernel on the host): its
# inputs (each in its dtype, None when absent) to its output.
Override = Callable[[list[np.ndarray | None]], np.ndarray]


def evaluate(model: Model, inputs: dict[str, np.ndarray], *,
             overrides: dict[int, Override] | None = None, state: State | None = None
             ) -> dict[str, np.ndarray]:
    """Every tensor's value (inputs, constants, intermediates, outputs) in its dtype:
    float32, or int8, int16 and int32 (computed by the integer forms' references), or a
    raw integer dtype. ``overrides``: the references of some operators, by index. The
    model's state tensors (an LSTM's, a noise estimate's) start from ``state`` (by tensor
    name; default: reset) and their new values are written back there, so that calls in a
    row run the model as consecutive invocations do."""
    state = {} if state is None else state
    values: dict[str, np.ndarray] = {k: stored(model, k, v) for k, v in inputs.items()}
    values.update({k: stored(model, k, v) for k, v in model.constants.items()})
    start = reset_state(model)
    start.update({k: v for k, v in state.items() if k in start})
    values.update({k: stored(model, k, v) for k, v in start.items()})
    out: dict[str, np.ndarray] = {}
    # NaN and infinities in the inputs propagate as IEEE arithmetic says, without warnings.
    with np.errstate(all="ignore"):
        for op in model.operators:
            args = [values[t] if t is not None else None for t in op.inputs]
            attrs = op.attr_dict
            shape = model.tensors[op.outputs[0]].shape
            custom = CUSTOM.get(op.op)
            if overrides and op.index in overrides:
                dts = [model.tensors[t].dtype if t else "float32" for t in op.inputs]
                values[op.outputs[0]] = np.asarray(overrides[op.index](
                    [None if a is None else a.astype(d) for a, d in zip(args, dts, strict=True)]
                ), F64).reshape(shape)
                continue
            if custom is not None:  # the user's reference, on the inputs in their dtypes
                ts = [model.tensors[t] for t in (*op.inputs, op.outputs[0]) if t]
                values[op.outputs[0]] = custom.run_reference(
                    args, attrs, [t.dtype for t in ts[:-1]], shape, [t.quant for t in ts])
                continue
            dtype = model.op_dtype(op)
            if dtype == "raw":
                _raw(model, op, args, values)
                continue
            # float64 holds every value exactly but an int64 one (a 16x8 bias)
            args = [None if v is None else v if v.dtype == np.int64 else np.asarray(v, F64)
                    for v in args]
            if OPS[op.op].states:
                y, new = _stateful(model, op, args)
                values.update(new)
            elif op.op in QUANT_OPS or dtype in QUANTIZED:
                values[op.outputs[0]] = np.asarray(_s8_checked(model, op, args), F64)
                continue
            elif op.op in _WINDOWED:
                y = _windowed(op.op, args, attrs, shape)
            else:
                y = _SIMPLE[op.op](args, attrs)
            if model.op_dtype(op) != "int8":
                y = _ACTIVATIONS[attrs.get("activation", "NONE")](np.asarray(y, F64))
            values[op.outputs[0]] = np.asarray(y, F64).reshape(shape)
        for k, v in values.items():
            dt = model.tensors[k].dtype
            out[k] = v.astype(np.dtype(dt) if dt in INT_DTYPES else np.float32)
    state.update({k: out[k] for k in model.states})
    return out
