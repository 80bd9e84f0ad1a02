"""Lowering a quantized ONNX graph node by node (see :mod:`.onnx_qdq`): QuantizeLinear and
DequantizeLinear, float operators between them, QLinearConv / QLinearMatMul / QGemm, and
byte-moving operators (MaxPool, Flatten, Reshape) applied to int8 tensors directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.shapes import Shape
from .graph import Builder, Imported, Unsupported
from .onnx_context import Context, Graph, node_label, op_kind
from .onnx_ops import CONVERTERS as FLOAT_CONVERTERS
from .onnx_qdq import (
    Operand,
    Out,
    QAct,
    QState,
    attr,
    dequantize_node,
    dequantize_output,
    quantize_node,
    readers,
)
from .onnx_qdq_ops import clip_activation, fuse_relu
from .onnx_qdq_qlinear import QDQ_CONVERTERS, QLINEAR, QLINEAR_SIMPLE, arg, qlinear, qlinear_simple
from .onnx_qdq_regions import SAME_QUANT

DOMAINS = ("", "ai.onnx", "com.microsoft")
KINDS = ("QuantizeLinear", "DequantizeLinear", *QLINEAR, *QLINEAR_SIMPLE, *QDQ_CONVERTERS,
         *SAME_QUANT, "Relu", "Clip")


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
    quant = st.quant(q, r, q.input[1], arg(q, 2))
    return Out(q.output[0], st.cname[q.output[0]], quant, act), [*fused, r]


def _float_op(st: QState, node: Any, i: int) -> None:
    """A float operator: on int8 tensors directly (QOperator's MaxPool, Flatten, Reshape,
    the output keeping the input's quantization), between DQ and Q, or left in float32
    (:func:`_float_fallback`)."""
    if any(_computed_float(st, t) for t in node.input):
        _float_fallback(st, node, i)
        return
    ins = [_operand(st, t) for t in node.input]
    if node.input and node.input[0] in st.acts:
        if node.op_type not in SAME_QUANT:
            raise Unsupported("on an int8 tensor (no QLinear form)")
        x = st.acts[node.input[0]]
        out = node.output[0]
        SAME_QUANT[node.op_type](st, node, i, ins, Out(out, st.cname[out], x.quant))
        return
    convert = QDQ_CONVERTERS.get(node.op_type) or SAME_QUANT.get(node.op_type)
    try:
        if convert is None:
            raise Unsupported()
        where, fused = _quantized_output(st, node)
    except Unsupported:
        _float_fallback(st, node, i)
        return
    first = ins[0] if ins else None
    if node.op_type in SAME_QUANT and node.op_type not in QDQ_CONVERTERS and (
            not isinstance(first, QAct) or first.quant != where.quant):
        raise Unsupported("output quantized differently from its input")
    convert(st, node, i, ins, where)
    st.done.update(fused)


def _computed_float(st: QState, t: str) -> bool:
    """Whether ``t`` is a float32 tensor computed in float (or a graph input)."""
    name = st.cname.get(t, "")
    return bool(t) and t not in st.floats and name in st.b.shapes and \
        st.b.dtypes.get(name) == "float32"


def _float_fallback(st: QState, node: Any, i: int) -> None:
    """An operator the quantizer left in float32 (its output not quantized: Tanh,
    ReduceMean, LeakyRelu... in quantize_static's defaults): its int8 operands
    dequantized (back in NCHW), its quantized constants as float32, the operator as the
    float importer converts it; a QuantizeLinear after it quantizes its output again."""
    convert = FLOAT_CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
    if convert is None:
        raise Unsupported("output not quantized, and no float32 form")
    for t in node.input:
        if t in st.floats and st.cname[t] not in st.b.shapes:
            dequantize_output(st, node, st.acts[st.floats[t]], st.cname[t])
        elif t in st.qconsts:
            st.consts.setdefault(t, np.asarray(st.qconsts[t].real(), np.float32))
        elif t in st.acts:
            raise Unsupported("on an int8 tensor (no QLinear form)")
    g = Graph(st.path, st.opset, st.cname, {}, st.consts, {}, st.hints, {}, st.outputs)
    attrs = {a.name: attr(node, a.name) for a in node.attribute}
    convert(Context(st.b, g, node, i, attrs))


def _node(st: QState, node: Any, i: int) -> None:
    if node.domain not in DOMAINS:
        raise Unsupported()
    kind = node.op_type
    if kind == "QuantizeLinear":
        quantize_node(st, node, i)
    elif kind == "DequantizeLinear":
        dequantize_node(st, node, i)
    elif kind in QLINEAR:
        qlinear(st, node, i)
    elif kind in QLINEAR_SIMPLE:
        qlinear_simple(st, node, i)
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
        kind = op_kind(node)
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
