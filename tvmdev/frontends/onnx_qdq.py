"""ONNX quantized models lowered to tvmdev's int8 operators: QDQ models (QuantizeLinear /
DequantizeLinear pairs around float operators, as onnxruntime's ``quantize_static``
writes them) and QOperator ones (QLinearConv, QLinearMatMul, com.microsoft QGemm).

A DequantizeLinear of an initializer is a quantized constant (int8 weights, int32 bias);
of a computed int8 tensor, it stands for that tensor. A float operator whose operands are
all dequantized and whose output is read by one QuantizeLinear (through a Relu or Clip,
fused as the op's activation) becomes the int8 operator writing that QuantizeLinear's
output (:mod:`.onnx_qdq_ops`, :mod:`.onnx_qdq_regions`; QLinear nodes through
:mod:`.onnx_qdq_qlinear`; node by node in :mod:`.onnx_qdq_lower`, which also runs an
operator the quantizer left in float32 in float). The graph's float inputs are quantized
and its float outputs dequantized; int8 is the only integer type taken (uint8, QUInt8,
is refused). This module holds the shared state and QuantizeLinear / DequantizeLinear.

Layout: ONNX is NCHW, tvmdev's int8 convolutions and pools NHWC (TFLite's kernels). A 4-D
float input is transposed to NHWC once before its quantize, and a 4-D output back after
its dequantize, so the int8 body runs NHWC: conv weights are stored OHWI, axes of
softmax, concat, mean are moved, and a Flatten of an NHWC tensor keeps its bytes in HWC
order, the Gemm reading it taking its weight columns permuted to match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.quant import Quant
from ..model.shapes import Shape
from .graph import Builder, Unsupported
from .onnx_context import node_label, op_kind

QDQ_KINDS = ("QuantizeLinear", "DequantizeLinear")
QLINEAR_KINDS = ("QLinearConv", "QLinearMatMul", "QGemm")
INT8_HINT = ("quantize with quantize_static(..., activation_type=QuantType.QInt8, "
             "weight_type=QuantType.QInt8)")
NHWC = (0, 2, 3, 1)  # NCHW -> NHWC
NCHW = (0, 3, 1, 2)  # NHWC -> NCHW
# The ops whose int8 form takes a fused activation.
FUSING = ("conv2d", "depthwise_conv2d", "fully_connected", "add", "mul")


def quantized(model: Any) -> bool:
    """Whether the model has quantized operators (QDQ or QOperator)."""
    return any(n.op_type in QDQ_KINDS + QLINEAR_KINDS for n in model.graph.node)


@dataclass(frozen=True)
class QAct:
    """A computed int8 tensor: its tvmdev name, quantization and layout ("" as ONNX has
    it; "NHWC": a 4-D NCHW tensor stored NHWC; "HWC": a Flatten of one, [N, H*W*C] in HWC
    order, ``chw`` its (C, H, W))."""

    name: str
    quant: Quant
    layout: str = ""
    chw: tuple[int, int, int] = (0, 0, 0)


@dataclass(frozen=True)
class QConst:
    """A quantized constant: its integer values and quantization (axis as in ONNX)."""

    values: np.ndarray
    quant: Quant
    source: str  # the ONNX initializer's name

    def real(self) -> np.ndarray:
        """The float values it stands for."""
        scale, zp = np.asarray(self.quant.scale, np.float64), np.asarray(self.quant.zero_point)
        if len(self.quant.scale) > 1:
            shape = [1] * self.values.ndim
            shape[self.quant.axis] = -1
            scale, zp = scale.reshape(shape), zp.reshape(shape)
        return np.asarray((self.values.astype(np.float64) - zp) * scale)


@dataclass
class QState:
    """The quantized graph being lowered."""

    b: Builder
    path: Path
    nodes: list[Any]
    consts: dict[str, np.ndarray]
    cname: dict[str, str]
    hints: dict[str, Shape]
    outputs: tuple[str, ...]
    opset: int
    acts: dict[str, QAct] = field(default_factory=dict)  # ONNX int8 tensor -> QAct
    floats: dict[str, str] = field(default_factory=dict)  # DQ output -> ONNX int8 tensor
    qconsts: dict[str, QConst] = field(default_factory=dict)  # DQ output -> constant
    readers: dict[str, list[int]] = field(default_factory=dict)  # tensor -> node indices
    done: set[int] = field(default_factory=set)  # nodes fused into an earlier one
    written: dict[str, int] = field(default_factory=dict)  # tvmdev tensor -> operator

    def fail(self, msg: str, node: Any, i: int, hint: str | None = None) -> TvmdevError:
        """An error naming node ``i``."""
        return TvmdevError(f"{op_kind(node)} {node_label(node, i)}: {msg}", str(self.path),
                           hint=hint)

    def quant(self, node: Any, i: int, scale: str, zp: str, axis: int = 1,
              what: str = "") -> Quant:
        """The quantization of a (scale, zero point) pair of initializers."""
        s = self.consts.get(scale)
        if s is None:
            raise Unsupported(f"{what or 'scale'} not constant")
        z = self.consts.get(zp) if zp else np.zeros(s.shape, np.int8)
        if z is None:
            raise Unsupported(f"{what or 'zero point'} not constant")
        if z.dtype == np.uint8:
            raise self.fail("uint8 quantization (QUInt8); tvmdev's quantized operators take "
                            "int8 only", node, i, hint=INT8_HINT)
        if z.dtype not in (np.int8, np.int32):
            raise Unsupported(f"{z.dtype} zero point")
        sv, zv = np.ravel(s).astype(np.float64), np.ravel(z).astype(np.int64)
        if sv.size != zv.size or not np.all(np.isfinite(sv)) or np.any(sv <= 0):
            raise Unsupported("scales not positive or not matching the zero points")
        return Quant(tuple(float(np.float32(v)) for v in sv),
                           tuple(int(v) for v in zv), axis)

    def emit(self, node: Any, op: str, inputs: list[str | None], out: str,
             attrs: dict[str, Any] | None = None, dtype: str = "int8",
             quant: Quant | None = None) -> str:
        """One tvmdev operator (int8 by default) writing ``out``."""
        self.b.emit(op_kind(node), op, inputs, out, attrs, dtype, quant)
        self.written[out] = len(self.b.operators) - 1
        return out

    def constant(self, hint: str, values: np.ndarray, dtype: str,
                 quant: Quant | None) -> str:
        """A constant named after ``hint`` (an ONNX initializer's name: that name, the
        first time)."""
        name = self.cname.get(hint, hint)
        if name in self.b.constants or name in self.b.shapes or name not in self.cname.values():
            name = self.b.fresh(name)
        return self.b.constant(name, values, dtype, quant)

    def shape(self, name: str) -> Shape:
        """The tvmdev shape of a computed tensor."""
        return self.b.shapes[name]

    def logical(self, a: QAct) -> Shape:
        """An int8 tensor's shape as ONNX sees it (NCHW)."""
        s = self.shape(a.name)
        if a.layout == "NHWC":
            return tuple(s[j] for j in NCHW)
        return s

    def only_reader(self, tensor: str) -> int | None:
        """The one node reading ``tensor`` (None: several, none, or a graph output)."""
        r = self.readers.get(tensor, [])
        return r[0] if len(r) == 1 and tensor not in self.outputs else None


def readers(nodes: list[Any]) -> dict[str, list[int]]:
    """The nodes reading each tensor."""
    out: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        for t in n.input:
            if t:
                out.setdefault(t, []).append(i)
    return out


def quantize_node(st: QState, node: Any, i: int) -> None:
    """QuantizeLinear of a dequantized int8 tensor (a requantization; nothing when the
    quantization is the same), or of a float32 tensor: a graph input or an operator's
    left in float (transposed to NHWC first when 4-D: quantize is elementwise)."""
    src, out = node.input[0], node.output[0]
    axis = int(next((a.i for a in node.attribute if a.name == "axis"), 1))
    q = st.quant(node, i, node.input[1], node.input[2] if len(node.input) > 2 else "", axis)
    if q.scale and len(q.scale) > 1:
        raise Unsupported("per-channel quantization of a computed tensor")
    cn = st.cname[out]
    if src in st.floats:
        a = st.acts[st.floats[src]]
        if a.quant == q:
            st.acts[out] = a
            return
        st.emit(node, "quantize", [a.name], cn, {}, quant=q)
        st.acts[out] = QAct(cn, q, a.layout, a.chw)
        return
    x = st.cname.get(src, "")
    if x in st.b.shapes and st.b.dtypes.get(x) == "float32":
        layout = ""
        if len(st.shape(x)) == 4:
            x = st.emit(node, "transpose", [x], st.b.fresh(f"{x}_nhwc"), {"perm": list(NHWC)},
                        dtype="float32")
            layout = "NHWC"
        st.emit(node, "quantize", [x], cn, {}, quant=q)
        st.acts[out] = QAct(cn, q, layout)
        return
    raise Unsupported("of a constant (quantize it at export)")


def dequantize_node(st: QState, node: Any, i: int) -> None:
    """DequantizeLinear of an initializer (a quantized constant), or of an int8 tensor
    (stands for it; dequantized, and transposed back to NCHW, as a graph output)."""
    src, out = node.input[0], node.output[0]
    axis = int(next((a.i for a in node.attribute if a.name == "axis"), 1))
    q = st.quant(node, i, node.input[1], node.input[2] if len(node.input) > 2 else "", axis)
    if src in st.consts:
        values = st.consts[src]
        if values.dtype == np.uint8:
            raise st.fail("uint8 weights (QUInt8); tvmdev's quantized operators take int8 "
                          "only", node, i, hint=INT8_HINT)
        if values.dtype not in (np.int8, np.int32):
            raise Unsupported(f"{values.dtype} constant")
        if len(q.scale) > 1:
            q = Quant(q.scale, q.zero_point, axis % max(values.ndim, 1))
        st.qconsts[out] = QConst(values, q, src)
        return
    if src not in st.acts:
        raise Unsupported("of a tensor that is not int8")
    st.floats[out] = src
    if out in st.outputs:
        dequantize_output(st, node, st.acts[src], st.cname[out])


def dequantize_output(st: QState, node: Any, a: QAct, out: str) -> None:
    """A graph output: the int8 tensor dequantized, back in ONNX's layout."""
    if not a.layout:
        st.emit(node, "dequantize", [a.name], out, {}, dtype="float32")
        return
    f = st.emit(node, "dequantize", [a.name], st.b.fresh(f"{a.name}_float"), {},
                dtype="float32")
    if a.layout == "HWC":
        c, h, w = a.chw
        n = st.shape(a.name)[0]
        f = st.emit(node, "reshape", [f], st.b.fresh(f"{a.name}_nhwc"),
                    {"shape": [n, h, w, c]}, dtype="float32")
        f = st.emit(node, "transpose", [f], st.b.fresh(f"{a.name}_nchw"),
                    {"perm": list(NCHW)}, dtype="float32")
        st.emit(node, "reshape", [f], out, {"shape": [n, c * h * w]}, dtype="float32")
        return
    st.emit(node, "transpose", [f], out, {"perm": list(NCHW)}, dtype="float32")


@dataclass(frozen=True)
class Out:
    """Where an int8 operator writes: the ONNX tensor, its quantization, the activation."""

    onnx: str
    name: str
    quant: Quant
    activation: str = "NONE"


Operand = QAct | QConst | None
Converter = Callable[[QState, Any, int, list[Operand], Out], None]


def attr(node: Any, key: str, default: Any = None) -> Any:
    """A node attribute's value."""
    from onnx import helper
    for a in node.attribute:
        if a.name == key:
            v = helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return default


def activation_input(x: Operand, what: str = "input") -> QAct:
    """``x``, which must be a computed int8 tensor."""
    if not isinstance(x, QAct):
        raise Unsupported(f"{what} not a computed int8 tensor")
    return x


def write(st: QState, node: Any, op: str, ins: list[str | None], out: Out,
           attrs: dict[str, Any], layout: str = "") -> None:
    """Emit the int8 ``op`` writing ``out`` (its activation an attribute), in ``layout``."""
    if out.activation != "NONE":
        if op not in FUSING:
            raise Unsupported(f"a {out.activation} after it")
        attrs = {**attrs, "activation": out.activation}
    st.emit(node, op, ins, out.name, attrs, quant=out.quant)
    st.acts[out.onnx] = QAct(out.name, out.quant, layout)


# The quantization TFLM's int8 softmax, logistic and tanh write in, whatever the output
# tensor says (TFLite's converter always gives them this one).
FIXED_OUTPUT = {"softmax": Quant((1 / 256,), (-128,), 0),
                "sigmoid": Quant((1 / 256,), (-128,), 0),
                "tanh": Quant((1 / 128,), (0,), 0)}


def write_fixed(st: QState, node: Any, op: str, ins: list[str | None], out: Out,
                attrs: dict[str, Any], layout: str, chw: tuple[int, int, int] = (0, 0, 0)
                ) -> None:
    """Emit softmax, sigmoid or tanh at TFLM's fixed output quantization, then (when the
    model quantizes the output otherwise, as onnxruntime's calibration does: 1/255 for a
    softmax) an int8 requantization to the output's. An output quantized more finely
    than TFLM's fixed one (onnxruntime calibrates a Tanh or Sigmoid to the range it saw)
    is computed as the model says, in float32 between a dequantize and a quantize: going
    through the coarser fixed step would lose up to half of it, several of the model's
    steps."""
    fixed = FIXED_OUTPUT[op]
    if out.quant == fixed:
        st.emit(node, op, ins, out.name, attrs, quant=fixed)
    elif len(out.quant.scale) == 1 and out.quant.scale[0] < fixed.scale[0]:
        x = ins[0]
        assert x is not None
        f = st.emit(node, "dequantize", [x], st.b.fresh(f"{x}_float"), {}, dtype="float32")
        g = st.emit(node, op, [f], st.b.fresh(f"{out.name}_{op}"), attrs, dtype="float32")
        st.emit(node, "quantize", [g], out.name, {}, quant=out.quant)
    else:
        tmp = st.emit(node, op, ins, st.b.fresh(f"{out.name}_{op}"), attrs, quant=fixed)
        st.emit(node, "quantize", [tmp], out.name, {}, quant=out.quant)
    st.acts[out.onnx] = QAct(out.name, out.quant, layout, chw)
