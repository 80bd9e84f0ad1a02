"""Lowering a quantized ONNX graph node by node (see :mod:`.onnx_qdq`): QuantizeLinear and
DequantizeLinear, float operators between them, QLinearConv / QLinearMatMul / QGemm, and
byte-moving operators (MaxPool, Flatten, Reshape) applied to int8 tensors directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.shapes import Shape
from .graph import Builder, Imported, QuantParams, Unsupported
from .onnx_context import node_label
from .onnx_qdq import (
    Converter,
    Operand,
    Out,
    QAct,
    QConst,
    QState,
    attr,
    dequantize_node,
    quantize_node,
    readers,
)
from .onnx_qdq_ops import NN_CONVERTERS, clip_activation, fuse_relu
from .onnx_qdq_regions import REGION_CONVERTERS, SAME_QUANT

DOMAINS = ("", "ai.onnx", "com.microsoft")
QDQ_CONVERTERS: dict[str, Converter] = {**NN_CONVERTERS, **REGION_CONVERTERS}
# QLinear kinds: (operand groups (value, scale, zero point) for x and w; bias; y's pair).
QLINEAR = {"QLinearConv": ((0, 1, 2), (3, 4, 5), 8, (6, 7), "Conv"),
           "QLinearMatMul": ((0, 1, 2), (3, 4, 5), -1, (6, 7), "MatMul"),
           "QGemm": ((0, 1, 2), (3, 4, 5), 6, (7, 8), "Gemm")}
KINDS = ("QuantizeLinear", "DequantizeLinear", *QLINEAR, *QDQ_CONVERTERS, *SAME_QUANT,
         "Relu", "Clip")


def _operand(st: QState, t: str) -> Operand:
    if not t:
        return None
    if t in st.floats:
        return st.acts[st.floats[t]]
    if t in st.qconsts:
        return st.qconsts[t]
    if t in st.acts:
        return st.acts[t]
    if t in st.consts:
        return None  # a float or shape constant: read by the converter if it needs it
    raise Unsupported(f"operand '{t}' not quantized (no DequantizeLinear gives it)")


def _arg(node: Any, j: int) -> str:
    return node.input[j] if 0 <= j < len(node.input) else ""


def _qlinear(st: QState, node: Any, i: int) -> None:
    """QLinearConv, QLinearMatMul, QGemm: the same int8 ops as their QDQ forms."""
    xg, wg, bj, yg, kind = QLINEAR[node.op_type]
    x = st.acts.get(_arg(node, xg[0]))
    if x is None:
        raise Unsupported("input not a computed int8 tensor")
    qx = st.quant(node, i, _arg(node, xg[1]), _arg(node, xg[2]))
    if qx != x.quant:
        raise Unsupported("input quantization differs from its tensor's")
    w = st.consts.get(_arg(node, wg[0]))
    if w is None:
        raise Unsupported("weights not constant")
    axis = 1 if node.op_type == "QLinearMatMul" or (
        node.op_type == "QGemm" and not attr(node, "transB", 0)) else 0
    qw = st.quant(node, i, _arg(node, wg[1]), _arg(node, wg[2]), axis, "weights scale")
    ins: list[Operand] = [x, QConst(w, qw, _arg(node, wg[0]))]
    b = st.consts.get(_arg(node, bj))
    if b is not None:
        scales = tuple(qx.scale[0] * s for s in qw.scale)
        ins.append(QConst(b, QuantParams(scales, (0,) * len(scales), 0), _arg(node, bj)))
    if not _arg(node, yg[0]):
        raise Unsupported("float output")
    qy = st.quant(node, i, _arg(node, yg[0]), _arg(node, yg[1]))
    out = node.output[0]
    QDQ_CONVERTERS[kind](st, node, i, ins, Out(out, st.cname[out], qy))


def _quantized_output(st: QState, node: Any) -> tuple[Out, list[int]]:
    """Where a float operator between DQ and Q writes: the Q's output (through a Relu or
    Clip, its fused activation), and the nodes folded into it."""
    r = st.only_reader(node.output[0])
    act, fused = "NONE", []
    if r is not None and st.nodes[r].op_type in ("Relu", "Clip"):
        act, fused = clip_activation(st, st.nodes[r]), [r]
        r = st.only_reader(st.nodes[r].output[0])
    if r is None or st.nodes[r].op_type != "QuantizeLinear":
        raise Unsupported("output not quantized (no one QuantizeLinear reads it)")
    q = st.nodes[r]
    quant = st.quant(q, r, q.input[1], _arg(q, 2))
    return Out(q.output[0], st.cname[q.output[0]], quant, act), [*fused, r]


def _float_op(st: QState, node: Any, i: int) -> None:
    """A float operator: on int8 tensors directly (QOperator's MaxPool, Flatten, Reshape,
    the output keeping the input's quantization) or between DQ and Q."""
    ins = [_operand(st, t) for t in node.input]
    direct = node.input and node.input[0] in st.acts
    if direct:
        if node.op_type not in SAME_QUANT:
            raise Unsupported("on an int8 tensor (no QLinear form)")
        x = st.acts[node.input[0]]
        out = node.output[0]
        SAME_QUANT[node.op_type](st, node, i, ins, Out(out, st.cname[out], x.quant))
        return
    convert = QDQ_CONVERTERS.get(node.op_type) or SAME_QUANT.get(node.op_type)
    if convert is None:
        raise Unsupported()
    where, fused = _quantized_output(st, node)
    first = ins[0] if ins else None
    if node.op_type in SAME_QUANT and node.op_type not in QDQ_CONVERTERS and (
            not isinstance(first, QAct) or first.quant != where.quant):
        raise Unsupported("output quantized differently from its input")
    convert(st, node, i, ins, where)
    st.done.update(fused)


def _node(st: QState, node: Any, i: int) -> None:
    if node.domain not in DOMAINS:
        raise Unsupported()
    kind = node.op_type
    if kind == "QuantizeLinear":
        quantize_node(st, node, i)
    elif kind == "DequantizeLinear":
        dequantize_node(st, node, i)
    elif kind in QLINEAR:
        _qlinear(st, node, i)
    elif kind in ("Relu", "Clip") and fuse_relu(st, node, i):
        return
    else:
        _float_op(st, node, i)


def convert(model: Any, path: Path, name: str, b: Builder, cname: dict[str, str],
            hints: dict[str, Shape], consts: dict[str, np.ndarray]) -> Imported:
    """Import the quantized ONNX ``model`` into ``b`` (its inputs already added)."""
    nodes = list(model.graph.node)
    versions = {imp.domain: imp.version for imp in model.opset_import}
    outputs = tuple(vi.name for vi in model.graph.output)
    st = QState(b, path, nodes, consts, cname, hints, outputs,
                versions.get("", versions.get("ai.onnx", 0)))
    st.readers = readers(nodes)
    refused: set[str] = set()
    for i, node in enumerate(nodes):
        kind = node.op_type if node.domain in ("", "ai.onnx") else \
            f"{node.domain}.{node.op_type}"
        b.summary[kind] = b.summary.get(kind, 0) + 1
        if i in st.done:
            continue
        if refused & set(node.input) and node.op_type in KINDS:
            refused.update(node.output)  # listed where it starts
            continue
        try:
            _node(st, node, i)
        except Unsupported as exc:
            b.refuse(kind, exc.detail, node_label(node, i))
            refused.update(node.output)
    outs = [cname[o] for o in outputs]
    if not b.unsupported:
        for o in outputs:
            if cname[o] not in b.shapes or cname[o] in b.inputs:
                raise TvmdevError(f"output '{o}' is not computed from int8 operators (no "
                                  "DequantizeLinear writes it)", str(path),
                                  hint="quantize the whole model with quantize_static")
    return b.finish(name, outs, hint="tvmdev lowers quantized ONNX models (int8 QDQ or "
                    "QLinear) of these operators: " + ", ".join(sorted(set(KINDS))))
