"""quantize_static's QOperator format (see :mod:`.onnx_qdq`): QLinearConv, QLinearMatMul
and com.microsoft QGemm, and com.microsoft's QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearAveragePool, QLinearGlobalAveragePool, QLinearSoftmax and QLinearConcat, as the
int8 operators their QDQ forms become: each (value, scale, zero point) operand group an
int8 tensor (quantized as the group says) or a quantized constant."""

from __future__ import annotations

from typing import Any

from ..model.quant import Quant
from .graph import Unsupported
from .onnx_qdq import Converter, Operand, Out, QConst, QState, attr
from .onnx_qdq_ops import NN_CONVERTERS
from .onnx_qdq_regions import REGION_CONVERTERS

QDQ_CONVERTERS: dict[str, Converter] = {**NN_CONVERTERS, **REGION_CONVERTERS}
# QLinear kinds: (operand groups (value, scale, zero point) for x and w; bias; y's pair).
QLINEAR = {"QLinearConv": ((0, 1, 2), (3, 4, 5), 8, (6, 7), "Conv"),
           "QLinearMatMul": ((0, 1, 2), (3, 4, 5), -1, (6, 7), "MatMul"),
           "QGemm": ((0, 1, 2), (3, 4, 5), 6, (7, 8), "Gemm")}
# com.microsoft's QLinear forms of other ops: the QDQ converter, the (value, scale, zero
# point) operand groups (None: QLinearConcat's triples from operand 2), the output's pair.
QLINEAR_SIMPLE: dict[str, tuple[str, tuple[tuple[int, int, int], ...] | None,
                                tuple[int, int]]] = {
    "QLinearAdd": ("Add", ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QLinearMul": ("Mul", ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QLinearSigmoid": ("Sigmoid", ((0, 1, 2),), (3, 4)),
    "QLinearAveragePool": ("AveragePool", ((0, 1, 2),), (3, 4)),
    "QLinearGlobalAveragePool": ("GlobalAveragePool", ((0, 1, 2),), (3, 4)),
    "QLinearSoftmax": ("Softmax", ((0, 1, 2),), (3, 4)),
    "QLinearConcat": ("Concat", None, (0, 1)),
}


def arg(node: Any, j: int) -> str:
    """The name of the node's operand ``j`` ("" when absent)."""
    return node.input[j] if 0 <= j < len(node.input) else ""


def qlinear(st: QState, node: Any, i: int) -> None:
    """QLinearConv, QLinearMatMul, QGemm: the same int8 ops as their QDQ forms."""
    xg, wg, bj, yg, kind = QLINEAR[node.op_type]
    x = st.acts.get(arg(node, xg[0]))
    if x is None:
        raise Unsupported("input not a computed int8 tensor")
    qx = st.quant(node, i, arg(node, xg[1]), arg(node, xg[2]))
    if qx != x.quant:
        raise Unsupported("input quantization differs from its tensor's")
    w = st.consts.get(arg(node, wg[0]))
    if w is None:
        raise Unsupported("weights not constant")
    axis = 1 if node.op_type == "QLinearMatMul" or (
        node.op_type == "QGemm" and not attr(node, "transB", 0)) else 0
    qw = st.quant(node, i, arg(node, wg[1]), arg(node, wg[2]), axis, "weights scale")
    ins: list[Operand] = [x, QConst(w, qw, arg(node, wg[0]))]
    b = st.consts.get(arg(node, bj))
    if b is not None:
        scales = tuple(qx.scale[0] * s for s in qw.scale)
        ins.append(QConst(b, Quant(scales, (0,) * len(scales), 0), arg(node, bj)))
    if not arg(node, yg[0]):
        raise Unsupported("float output")
    qy = st.quant(node, i, arg(node, yg[0]), arg(node, yg[1]))
    out = node.output[0]
    QDQ_CONVERTERS[kind](st, node, i, ins, Out(out, st.cname[out], qy))


def _group(st: QState, node: Any, i: int, g: tuple[int, int, int]) -> Operand:
    v = arg(node, g[0])
    q = st.quant(node, i, arg(node, g[1]), arg(node, g[2]))
    if v in st.acts:
        if st.acts[v].quant != q:
            raise Unsupported("an operand quantized unlike its tensor")
        return st.acts[v]
    if v in st.consts:
        return QConst(st.consts[v], q, v)
    raise Unsupported(f"operand '{v}' not int8")


def qlinear_simple(st: QState, node: Any, i: int) -> None:
    """com.microsoft's QLinearAdd, ..., QLinearConcat as the int8 op of their QDQ form."""
    kind, groups, yg = QLINEAR_SIMPLE[node.op_type]
    if attr(node, "channels_last", 0):
        raise Unsupported("channels_last")
    if groups is None:
        groups = tuple((j, j + 1, j + 2) for j in range(2, len(node.input), 3))
    ins = [_group(st, node, i, g) for g in groups]
    qy = st.quant(node, i, arg(node, yg[0]), arg(node, yg[1]))
    out = node.output[0]
    QDQ_CONVERTERS[kind](st, node, i, ins, Out(out, st.cname[out], qy))
