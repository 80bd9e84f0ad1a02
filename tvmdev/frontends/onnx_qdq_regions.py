"""The int8 operators of a quantized ONNX model that move or reduce regions (see
:mod:`.onnx_qdq`): the pools (NHWC, ONNX's window attributes), GlobalAveragePool and
ReduceMean (the int8 mean, axes moved to NHWC), Softmax along an axis, Concat (each input
requantized to the output's quantization when it differs, as TFLM concatenates equal
quantizations only), Pad (pads moved to NHWC, the constant a real value), and Flatten /
Reshape as int8 reshapes (a Flatten of an NHWC tensor keeps its HWC order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Unsupported
from .onnx_qdq import (
    NHWC,
    Converter,
    Operand,
    Out,
    QAct,
    QState,
    activation_input,
    attr,
    write,
    write_fixed,
)


def layout_axis(st: QState, x: QAct, axis: int) -> int:
    """An ONNX axis of ``x`` in its tvmdev layout."""
    rank = len(st.shape(x.name))
    axis %= rank
    if x.layout == "NHWC":
        return NHWC.index(axis)
    if x.layout:
        raise Unsupported("an axis of a flattened NHWC tensor")
    return axis


def _pool(op: str) -> Converter:
    keys: tuple[str, ...] = ("kernel_shape", "strides", "pads", "auto_pad", "ceil_mode",
                             "dilations")
    keys += ("count_include_pad",) if op == "avgpool2d" else ()

    def convert(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
        x = activation_input(ins[0])
        if x.layout != "NHWC":
            raise Unsupported("not 2-D")
        attrs = {k: v for k in keys if (v := attr(node, k)) is not None}
        if attrs.get("auto_pad") == "NOTSET":
            del attrs["auto_pad"]
        attrs = {"layout": "NHWC", **attrs}
        st.b.check_steps(node.op_type, out.name, attrs)
        if out.quant == x.quant or out.activation != "NONE":
            write(st, node, op, [x.name], out, attrs, "NHWC")
            return
        # TFLM pools keep the input's quantization: pool, then requantize.
        tmp = st.emit(node, op, [x.name], st.b.fresh(f"{out.name}_{op}"), attrs,
                      quant=x.quant)
        st.emit(node, "quantize", [tmp], out.name, {}, quant=out.quant)
        st.acts[out.onnx] = QAct(out.name, out.quant, "NHWC")
    convert.__doc__ = (f"{op} NHWC, ONNX's window attributes as written; at the input's "
                       "quantization, then requantized when the output's differs.")
    return convert


def global_average_pool(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """GlobalAveragePool: the int8 mean over H and W (NHWC), keeping the dims."""
    x = activation_input(ins[0])
    if x.layout != "NHWC":
        raise Unsupported("not 2-D")
    write(st, node, "mean", [x.name], out, {"axes": [1, 2], "keepdims": 1}, "NHWC")


def softmax(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Softmax along one axis (opset 13's meaning; a 2-D input's last axis before), at
    TFLM's output quantization (requantized to the model's)."""
    x = activation_input(ins[0])
    rank = len(st.shape(x.name))
    opset = int(attr(node, "opset", st.opset))  # QLinearSoftmax's
    axis = int(attr(node, "axis", -1 if opset >= 13 else 1))
    if opset < 13 and axis % rank != rank - 1:
        raise Unsupported(f"axis {axis} before opset 13 (a flattened softmax)")
    if out.activation != "NONE":
        raise Unsupported(f"a {out.activation} after it")
    write_fixed(st, node, "softmax", [x.name], out, {"axis": layout_axis(st, x, axis)},
                x.layout, x.chw)


def flatten(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Flatten at axis 1 (of an NHWC tensor: its bytes as they are, in HWC order, unless
    H * W is 1) and Reshape to [N, -1]-like shapes; the int8 reshape keeps the bytes."""
    x = activation_input(ins[0])
    logical = st.logical(x)
    if node.op_type == "Flatten":
        axis = int(attr(node, "axis", 1)) % max(len(logical), 1)
        shape = [int(np.prod(logical[:axis])), int(np.prod(logical[axis:]))]
    else:
        shape = list(st.hints.get(node.output[0], ()))
        if not shape:
            raise Unsupported("output shape unknown")
    layout, chw = "", (0, 0, 0)
    if x.layout == "NHWC" and logical[2] * logical[3] != 1:
        if shape != [logical[0], int(np.prod(logical[1:]))]:
            raise Unsupported("a reshape of an NHWC tensor other than to [N, C*H*W]")
        layout, chw = "HWC", (logical[1], logical[2], logical[3])
    elif x.layout:
        if x.layout == "HWC" and shape != list(logical):
            raise Unsupported("a reshape of a flattened NHWC tensor")
    st.emit(node, "reshape", [x.name], out.name, {"shape": shape}, quant=x.quant)
    st.acts[out.onnx] = QAct(out.name, x.quant, layout, chw)


def _requantized(st: QState, node: Any, x: QAct, out: Out) -> str:
    """``x`` at the output's quantization (an int8 requantization when it differs)."""
    if x.quant == out.quant:
        return x.name
    return st.emit(node, "quantize", [x.name], st.b.fresh(f"{x.name}_requantized"), {},
                   quant=out.quant)


def concat(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Concat of int8 tensors of one layout along the axis moved to it; an input quantized
    unlike the output is requantized first (TFLM concatenates equal quantizations only;
    ONNX Runtime dequantizes, concatenates and quantizes: the same)."""
    xs = [activation_input(x, "an operand") for x in ins]
    if len({x.layout for x in xs}) != 1:
        raise Unsupported("operands of different layouts")
    axis = layout_axis(st, xs[0], int(attr(node, "axis", 0)))
    write(st, node, "concat", [_requantized(st, node, x, out) for x in xs], out,
          {"axis": axis}, xs[0].layout)


def reduce_mean(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """ReduceMean over axes (an attribute before opset 18, an operand after) as the int8
    mean; of an NHWC tensor, over H and W only unless it keeps the dims."""
    x = activation_input(ins[0])
    rank = len(st.shape(x.name))
    given = attr(node, "axes") if st.opset < 18 else (
        [int(v) for v in np.ravel(st.consts[node.input[1]])]
        if len(node.input) > 1 and node.input[1] in st.consts else None)
    if given is None and len(node.input) > 1 and node.input[1]:
        raise Unsupported("axes not constant")
    axes = sorted(layout_axis(st, x, int(a)) for a in (given or range(rank)))
    keep = int(attr(node, "keepdims", 1))
    layout = x.layout if keep else ""
    if x.layout and not keep and axes != [1, 2]:
        raise Unsupported("a mean of an NHWC tensor dropping dims other than H and W")
    write(st, node, "mean", [x.name], out, {"axes": axes, "keepdims": keep}, layout)


def pad(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Pad, constant mode, pads known at import (moved to NHWC); the constant value a real
    number (a DequantizeLinear'd one too), which the int8 pad quantizes as the output."""
    x = activation_input(ins[0])
    if attr(node, "mode", "constant") != "constant":
        raise Unsupported(f"mode {attr(node, 'mode')}")
    rank = len(st.shape(x.name))
    pads = attr(node, "pads") if st.opset < 11 else (
        [int(v) for v in np.ravel(st.consts[node.input[1]])]
        if len(node.input) > 1 and node.input[1] in st.consts else None)
    if pads is None or len(pads) != 2 * rank or (len(node.input) > 3 and node.input[3]):
        raise Unsupported("pads not constant, or axes given")
    value = float(attr(node, "value", 0.0))
    if len(ins) > 2 and ins[2] is not None:
        raise Unsupported("a constant value computed at run time")
    if len(node.input) > 2 and node.input[2]:
        c = st.qconsts.get(node.input[2])
        v = c.real() if c is not None else st.consts[node.input[2]]
        if v.dtype == np.int8:  # QOperator's Pad on int8: quantized as the output
            v = (v.astype(np.float64) - out.quant.zero_point[0]) * out.quant.scale[0]
        value = float(np.ravel(v)[0])
    if x.layout == "NHWC":
        pads = [pads[j] for j in NHWC] + [pads[4 + j] for j in NHWC]
    elif x.layout:
        raise Unsupported("of a flattened NHWC tensor")
    write(st, node, "pad", [x.name], out, {"pads": list(pads), "value": value}, x.layout)


REGION_CONVERTERS: dict[str, Converter] = {
    "MaxPool": _pool("maxpool2d"), "AveragePool": _pool("avgpool2d"),
    "GlobalAveragePool": global_average_pool, "ReduceMean": reduce_mean,
    "Softmax": softmax, "Concat": concat, "Pad": pad,
}
# Moving bytes only: the output keeps the input's quantization (no QuantizeLinear needed).
SAME_QUANT: dict[str, Converter] = {"Flatten": flatten, "Reshape": flatten,
                                    "MaxPool": _pool("maxpool2d"), "Pad": pad}
