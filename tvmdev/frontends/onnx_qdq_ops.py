"""The int8 operators of a quantized ONNX model (see :mod:`.onnx_qdq`): one converter per
kind, each given its operands (:class:`~.onnx_qdq.QAct` int8 tensors, quantized
constants) and the output's quantization and fused activation, whether the node is a
float operator between DequantizeLinear and QuantizeLinear or a QLinear one.

Conv becomes conv2d NHWC with OHWI weights (depthwise_conv2d when each group is one input
channel), Gemm and MatMul by a constant fully_connected; their bias is int32 at scale
input_scale * weight_scale (rounded again if the model's differs). Add, Mul, the pools,
Sigmoid and Tanh map onto the int8 op of the same meaning (the region ones are in
:mod:`.onnx_qdq_regions`). A Relu or Clip is a fused activation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.quant import Quant
from .graph import Unsupported
from .onnx_context import op_kind
from .onnx_qdq import (
    FUSING,
    NHWC,
    Converter,
    Operand,
    Out,
    QAct,
    QConst,
    QState,
    activation_input,
    attr,
    write,
    write_fixed,
)

WEIGHT_HINT = ("quantize the weights symmetrically: quantize_static(..., "
               "extra_options={'WeightSymmetric': True}) (the default for QInt8)")
# ONNX Clip bounds (min, max) that are a fused activation of tvmdev's int8 ops.
CLIPS: dict[tuple[float | None, float | None], str] = {
    (0.0, None): "RELU", (0.0, 6.0): "RELU6", (-1.0, 1.0): "RELU_N1_TO_1"}


def _weights(st: QState, node: Any, i: int, w: Operand) -> QConst:
    if not isinstance(w, QConst) or w.values.dtype != np.int8:
        raise Unsupported("weights not a constant int8 tensor")
    if any(z != 0 for z in w.quant.zero_point):
        raise st.fail(f"weights '{w.source}' are asymmetric (zero point "
                      f"{max(w.quant.zero_point, key=abs)}); tvmdev's int8 kernels take "
                      "symmetric weights (zero point 0), as TFLite's spec", node, i,
                      hint=WEIGHT_HINT)
    return w


def _per_tensor(x: QAct) -> tuple[float, int]:
    if len(x.quant.scale) != 1:
        raise Unsupported("an input quantized per channel")
    return x.quant.scale[0], x.quant.zero_point[0]


def _bias(st: QState, b: Operand, s_in: float, w: Quant, n: int, implied: bool
          ) -> tuple[np.ndarray, str] | None:
    """The int32 bias at scale s_in * s_w (per channel): the model's int32 values when its
    scale is that (``implied``: QLinearConv's, which has none), else rounded again."""
    if b is None:
        return None
    if not isinstance(b, QConst) or b.values.size != n:
        raise Unsupported(f"bias not a constant of {n} values")
    want = s_in * np.broadcast_to(np.asarray(w.scale, np.float64), (n,))
    if implied or (len(b.quant.scale) in (1, n) and not any(b.quant.zero_point) and np.allclose(
            np.broadcast_to(b.quant.scale, (n,)), want, rtol=1e-6, atol=0)):
        return np.asarray(b.values.ravel(), np.int32), b.source
    v = np.rint(b.real().ravel() / want)
    if np.any(np.abs(v) > 2**31 - 1):
        raise Unsupported("bias beyond int32 at input_scale * weight_scale")
    return v.astype(np.int32), b.source


def _bias_operand(st: QState, node: Any, ins: list[Operand]) -> Operand:
    """The bias: quantized (a DequantizeLinear of int32, QLinear's int32), or a float32
    constant the quantizer left (quantized here at input_scale * weight_scale)."""
    b = ins[2] if len(ins) > 2 else None
    name = node.input[2] if node.op_type in ("Conv", "Gemm") and len(node.input) > 2 else ""
    if b is None and name:
        c = st.consts.get(name)
        if c is None or c.dtype != np.float32:
            raise Unsupported("bias neither quantized nor a float32 constant")
        return QConst(c, Quant((1.0,), (0,), 0), name)
    return b


def _bias_name(st: QState, bias: tuple[np.ndarray, str] | None, s_in: float,
               w: Quant) -> list[str | None]:
    if bias is None:
        return []
    scales = tuple(s_in * s for s in w.scale)
    q = Quant(scales, (0,) * len(scales), 0)
    return [st.constant(bias[1], bias[0], "int32", q)]


def conv(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Conv (2-D, NCHW in ONNX) as conv2d NHWC with OHWI weights, or depthwise_conv2d
    ([1, KH, KW, C * multiplier]) when each group is one input channel."""
    x, w = activation_input(ins[0]), _weights(st, node, i, ins[1])
    if x.layout != "NHWC" or w.values.ndim != 4:
        raise Unsupported("not 2-D")
    s_in, _ = _per_tensor(x)
    m, cg = w.values.shape[:2]
    c, group = st.shape(x.name)[3], int(attr(node, "group", 1))
    if len(w.quant.scale) > 1 and w.quant.axis != 0:
        raise Unsupported(f"weights per channel along axis {w.quant.axis}")
    bias = _bias(st, _bias_operand(st, node, ins), s_in, w.quant, m,
                 node.op_type == "QLinearConv")
    attrs: dict[str, Any] = {k: list(v) if isinstance(v, list) else v for k in (
        "strides", "pads", "dilations", "auto_pad") if (v := attr(node, k)) is not None}
    if attrs.get("auto_pad") == "NOTSET":
        del attrs["auto_pad"]
    st.b.check_steps(node.op_type, out.name, attrs)
    if group == c and cg == 1 and c > 1:
        q = Quant(w.quant.scale, w.quant.zero_point, 3)
        wn = st.constant(w.source, w.values.transpose(1, 2, 3, 0), "int8", q)
        if m != c:
            attrs["depth_multiplier"] = m // c
        op = "depthwise_conv2d"
    else:
        wn = st.constant(w.source, w.values.transpose(0, 2, 3, 1), "int8", w.quant)
        attrs = {"layout": "NHWC", **attrs, **({"group": group} if group != 1 else {})}
        op = "conv2d"
    write(st, node, op, [x.name, wn, *_bias_name(st, bias, s_in, w.quant)], out,
           attrs, "NHWC")


def _fc(st: QState, node: Any, i: int, x: QAct, w: QConst, wt: np.ndarray, b: Operand,
        out: Out) -> None:
    """fully_connected of x by weights ``wt`` [N, K] (w's values, transposed as needed)."""
    s_in, _ = _per_tensor(x)
    n = wt.shape[0]
    rank = len(st.shape(x.name))
    if x.layout == "NHWC" or rank < 2:
        raise Unsupported(f"a {rank}-D input")
    if x.layout == "HWC":  # x's values are in HWC order: permute the columns to match
        c, h, ww = x.chw
        if wt.shape[1] != c * h * ww:
            raise st.fail(f"input {list(st.shape(x.name))} (a flattened [{c}, {h}, {ww}]) "
                          f"does not flatten to rows of {wt.shape[1]} values (weights "
                          f"{list(wt.shape)})", node, i,
                          hint=st.b.hint_for(op_kind(node)))
        wt = wt.reshape(n, c, h, ww).transpose(0, 2, 3, 1).reshape(n, -1)
    q = Quant(w.quant.scale, w.quant.zero_point, 0)
    bias = _bias(st, b, s_in, q, n, False)
    wn = st.constant(w.source, np.ascontiguousarray(wt), "int8", q)
    attrs = {"keep_num_dims": 1} if rank > 2 else {}
    write(st, node, "fully_connected", [x.name, wn, *_bias_name(st, bias, s_in, q)],
           out, attrs)


def gemm(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """Gemm (and QGemm) by constant weights, alpha 1, beta 1, A not transposed."""
    bias = _bias_operand(st, node, ins)
    if attr(node, "transA", 0) or attr(node, "alpha", 1.0) != 1.0 or (
            bias is not None and attr(node, "beta", 1.0) != 1.0):
        raise Unsupported("transA, alpha or beta")
    x, w = activation_input(ins[0]), _weights(st, node, i, ins[1])
    if w.values.ndim != 2:
        raise Unsupported("weights not 2-D")
    trans = bool(attr(node, "transB", 0))
    per_n = 0 if trans else 1
    if len(w.quant.scale) > 1 and w.quant.axis != per_n:
        raise Unsupported("weights per channel along K")
    _fc(st, node, i, x, w, w.values if trans else w.values.T, bias, out)


def matmul(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
    """MatMul (and QLinearMatMul) of a computed tensor by constant weights [K, N]."""
    x, w = activation_input(ins[0]), _weights(st, node, i, ins[1])
    if w.values.ndim != 2:
        raise Unsupported("weights not 2-D (or not constant)")
    if len(w.quant.scale) > 1 and w.quant.axis != 1:
        raise Unsupported("weights per channel along K")
    _fc(st, node, i, x, w, w.values.T, None, out)


def _nhwc_const(st: QState, c: QConst, like: QAct) -> str:
    if len(c.quant.scale) != 1 or c.values.dtype != np.int8:
        raise Unsupported("a constant operand not int8 per tensor")
    v = c.values
    if like.layout == "NHWC":
        v = np.broadcast_to(v, st.logical(like)).transpose(NHWC)
    elif like.layout:
        raise Unsupported("a constant operand of a flattened NHWC tensor")
    return st.constant(c.source, np.ascontiguousarray(v), "int8", c.quant)


def _binary(op: str) -> Converter:
    def convert(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
        a, b = ins[0], ins[1]
        first = a if isinstance(a, QAct) else activation_input(b)
        names: list[str | None] = []
        for x in (a, b):
            if isinstance(x, QAct):
                if x.layout != first.layout or (x.layout and st.shape(x.name)
                                                != st.shape(first.name)):
                    raise Unsupported("operands of different layouts or shapes")
                names.append(x.name)
            elif isinstance(x, QConst):
                names.append(_nhwc_const(st, x, first))
            else:
                raise Unsupported("an operand not quantized")
        write(st, node, op, names, out, {}, first.layout)
    convert.__doc__ = f"{op} of int8 tensors (a constant operand broadcast to the layout)."
    return convert


def _unary(op: str) -> Converter:
    def convert(st: QState, node: Any, i: int, ins: list[Operand], out: Out) -> None:
        x = activation_input(ins[0])
        if out.activation != "NONE":
            raise Unsupported(f"a {out.activation} after it")
        write_fixed(st, node, op, [x.name], out, {}, x.layout, x.chw)
    convert.__doc__ = (f"the elementwise int8 {op}, in any layout, at TFLM's output "
                       "quantization (requantized to the model's).")
    return convert


def clip_activation(st: QState, node: Any) -> str:
    """The fused activation a Relu or Clip stands for."""
    if node.op_type == "Relu":
        return "RELU"
    lo, hi = (_bound(st, node, j, k) for j, k in ((1, "min"), (2, "max")))
    act = CLIPS.get((lo, hi))
    if act is None:
        raise Unsupported(f"Clip to [{lo}, {hi}] (int8: Relu, Clip 0..6, -1..1)")
    return act


def _bound(st: QState, node: Any, j: int, key: str) -> float | None:
    v = attr(node, key)
    if v is None and len(node.input) > j and node.input[j]:
        name = node.input[j]
        c = st.consts.get(name)
        if c is None and name in st.qconsts:
            c = st.qconsts[name].real()
        if c is None:
            raise Unsupported(f"{key} not constant")
        v = float(np.ravel(c)[0])
    return None if v is None else float(v)


def fuse_relu(st: QState, node: Any, i: int) -> bool:
    """A Relu or Clip between DequantizeLinear and QuantizeLinear, after an int8 conv,
    fully_connected, add or mul that only it reads: that op's activation (at the op's
    output quantization), then a requantization to the QuantizeLinear's when it differs,
    as ONNX Runtime computes it (clamp, then quantize again)."""
    src = st.floats.get(node.input[0])
    q = st.only_reader(node.output[0])
    if src is None or q is None or st.nodes[q].op_type != "QuantizeLinear":
        return False
    a = st.acts[src]
    k = st.written.get(a.name)
    reader = st.only_reader(src)
    if k is None or reader is None or st.only_reader(node.input[0]) != i:
        return False
    op = st.b.operators[k]
    if op.op not in FUSING or op.attrs.get("activation", "NONE") != "NONE":
        return False
    qn = st.nodes[q]
    quant = st.quant(qn, q, qn.input[1], qn.input[2] if len(qn.input) > 2 else "")
    st.b.rewrite(k, attrs={**op.attrs, "activation": clip_activation(st, node)})
    st.done.add(q)
    if quant == a.quant:
        st.acts[qn.output[0]] = a
        return True
    out = st.emit(qn, "quantize", [a.name], st.cname[qn.output[0]], {}, quant=quant)
    st.acts[qn.output[0]] = QAct(out, quant, a.layout, a.chw)
    return True


NN_CONVERTERS: dict[str, Converter] = {
    "Conv": conv, "Gemm": gemm, "MatMul": matmul,
    "Add": _binary("add"), "Mul": _binary("mul"),
    "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"),
}
