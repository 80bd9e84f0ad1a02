"""TFLite operators mapped onto tvmdev's: one small converter per operator kind, in a table
(this module's elementwise, shape and matrix operators, and :mod:`.tflite_nhwc`'s
windowed and region ones).

A converter reads the operator's operands and options through a :class:`Context` and adds
tvmdev operators to the builder; it raises :class:`Unsupported` for a variant it cannot
map. A kind missing from the table is reported as unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .graph import Unsupported
from .tflite_context import Context, activation, chain, with_activation
from .tflite_nhwc import CONVERTERS as NHWC_CONVERTERS
from .tflite_recurrent import CONVERTERS as RECURRENT_CONVERTERS
from .tflite_slice import CONVERTERS as SLICE_CONVERTERS

# Shape arithmetic folded into the RESHAPE it feeds (see tflite._folded).
SHAPE_KINDS = frozenset({"SHAPE", "STRIDED_SLICE", "PACK"})
# The kinds that map on int8 tensors too (the others are refused on them, saying so).
INT8_KINDS = frozenset({"QUANTIZE", "DEQUANTIZE", "FULLY_CONNECTED", "RESHAPE", "SQUEEZE",
                        "EXPAND_DIMS", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MUL",
                        "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "LOGISTIC", "TANH", "PAD",
                        "PADV2", "MEAN", "CONCATENATION", "TRANSPOSE", "LEAKY_RELU",
                        "HARD_SWISH", "LOG_SOFTMAX", "RESIZE_NEAREST_NEIGHBOR", "SUB",
                        "MAXIMUM", "MINIMUM", "SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM",
                        "STRIDED_SLICE", "SPLIT", "SPLIT_V", "RESIZE_BILINEAR",
                        "TRANSPOSE_CONV"})

# The kinds that map on int16 tensors (TFLite's 16x8 scheme; QUANTIZE also writes a
# quantized int32, as TFLM's does).
INT16_KINDS = frozenset({"QUANTIZE", "DEQUANTIZE", "FULLY_CONNECTED", "RESHAPE", "SQUEEZE",
                         "EXPAND_DIMS", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "SUB", "MUL",
                         "PAD", "PADV2", "LEAKY_RELU", "SOFTMAX", "AVERAGE_POOL_2D",
                         "MAX_POOL_2D", "TRANSPOSE", "CONCATENATION", "MAXIMUM",
                         "MINIMUM", "STRIDED_SLICE", "TRANSPOSE_CONV", "LOGISTIC", "TANH",
                         "MEAN", "RESIZE_NEAREST_NEIGHBOR"})
# Kinds TFLM has no int16 kernel for (its Eval refuses int16 tensors), with its words.
NOT_INT16 = {"HARD_SWISH": "TFLM's HARD_SWISH takes float32 and int8 only",
             "RESIZE_BILINEAR": "TFLM's RESIZE_BILINEAR takes float32 and int8 only"}


def fully_connected(ctx: Context) -> None:
    """FULLY_CONNECTED: fully_connected (weights [out, in], the input flattened to rows of
    `in` values), with keep_num_dims and the fused activation as its attributes."""
    o = ctx.options("FullyConnectedOptions")
    act = activation(o, ctx.int8())
    if o is not None and o.WeightsFormat() != 0:
        raise Unsupported("shuffled weights")
    ins = [ctx.inp(0), ctx.inp(1)] + ([ctx.inp(2)] if ctx.has(2) else [])
    attrs = {"keep_num_dims": 1} if o is not None and o.KeepNumDims() else {}
    chain(ctx, [("fully_connected", ins, with_activation(attrs, act))])


def _binary(op: str, options: str | None) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        attrs: dict[str, Any] = {}
        if options is not None:
            attrs = with_activation({}, activation(ctx.options(options), ctx.int8()))
        chain(ctx, [(op, [ctx.inp(0), ctx.inp(1)], attrs)])
    convert.__doc__ = (f"{op.upper()}: numpy broadcasting"
                       + (", the fused activation its attribute." if options else "."))
    return convert


def _unary(op: str, **attrs: float) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        chain(ctx, [(op, [ctx.inp(0)], dict(attrs))])
    convert.__doc__ = f"the elementwise {op}."
    return convert


# QUANTIZE's (input, output) dtypes: float32 to int8 or int16, and TFLM's requantizations.
QUANTIZE_PAIRS = frozenset({("float32", "int8"), ("float32", "int16"), ("int8", "int8"),
                            ("int16", "int8"), ("int8", "int16"), ("int16", "int16"),
                            ("int16", "int32"), ("int32", "int16")})


def quantize(ctx: Context) -> None:
    """QUANTIZE float32 -> int8 or int16, and the requantizations TFLM computes between
    int8, int16 and int32 (:data:`QUANTIZE_PAIRS`)."""
    t, out = ctx.tensor(0), ctx.g.tensors[ctx.op.outputs[0]]
    if (t.dtype, out.dtype) not in QUANTIZE_PAIRS:
        raise Unsupported(f"{t.dtype} to {out.dtype}")
    chain(ctx, [("quantize", [ctx.inp(0)], {})])


def dequantize(ctx: Context) -> None:
    """DEQUANTIZE int8 or int16 -> float32."""
    t, out = ctx.tensor(0), ctx.g.tensors[ctx.op.outputs[0]]
    if t.dtype not in ("int8", "int16") or out.dtype != "float32":
        raise Unsupported(f"{t.dtype} to {out.dtype}")
    chain(ctx, [("dequantize", [ctx.inp(0)], {})])


def softmax(ctx: Context) -> None:
    """SOFTMAX over the last axis; beta 1 only on float32, any on int8."""
    o = ctx.options("SoftmaxOptions")
    beta = float(o.Beta()) if o is not None else 1.0
    if beta != 1.0 and not ctx.int8():
        raise Unsupported(f"beta {beta:g}")
    chain(ctx, [("softmax", [ctx.inp(0)], {"axis": -1, **({"beta": beta} if beta != 1.0
                                                          else {})})])


def leaky_relu(ctx: Context) -> None:
    """LEAKY_RELU: leaky_relu, its alpha (0 without options, as TFLM reads it)."""
    o = ctx.options("LeakyReluOptions")
    alpha = float(o.Alpha()) if o is not None else 0.0
    chain(ctx, [("leaky_relu", [ctx.inp(0)], {"alpha": alpha})])


def reshape(ctx: Context) -> None:
    """RESHAPE, SQUEEZE, EXPAND_DIMS: a reshape to the output's static shape (the shape
    operand, and any shape arithmetic computing it, is folded)."""
    chain(ctx, [("reshape", [ctx.inp(0)], {"shape": ctx.static_shape()})])


def transpose(ctx: Context) -> None:
    """TRANSPOSE by a constant permutation (at most 5 dims and each entry a dim, as TFLM
    requires); one that moves no data (the dims it reorders beside one another are all
    1) is a reshape, a view."""
    x = ctx.inp(0)
    shape = ctx.b.shapes[x]
    perm = ctx.ints(1, "permutation")
    if len(shape) > 5 or len(perm) != len(shape) or sorted(perm) != list(range(len(shape))):
        raise Unsupported(f"permutation {perm} of a {len(shape)}-D tensor")
    moved = [p for p in perm if shape[p] != 1]
    if moved == sorted(moved):
        chain(ctx, [("reshape", [x], {"shape": [shape[p] for p in perm]})])
    else:
        chain(ctx, [("transpose", [x], {"perm": perm})])


def batch_matmul(ctx: Context) -> None:
    """BATCH_MATMUL without adjoints: matmul (numpy batching)."""
    o = ctx.options("BatchMatMulOptions")
    if o is not None and (o.AdjX() or o.AdjY()):
        raise Unsupported("adj_x or adj_y")
    chain(ctx, [("matmul", [ctx.inp(0), ctx.inp(1)], {})])


CONVERTERS: dict[str, Callable[[Context], None]] = {
    "FULLY_CONNECTED": fully_connected,
    "ADD": _binary("add", "AddOptions"),
    "MUL": _binary("mul", "MulOptions"),
    "SUB": _binary("sub", "SubOptions"),
    "MAXIMUM": _binary("maximum", None),
    "MINIMUM": _binary("minimum", None),
    "RELU": _unary("relu"),
    "RELU6": _unary("relu6"),
    "RELU_N1_TO_1": _unary("clip", min=-1.0, max=1.0),
    "LOGISTIC": _unary("sigmoid"),
    "TANH": _unary("tanh"),
    "SOFTMAX": softmax,
    "LEAKY_RELU": leaky_relu,
    "HARD_SWISH": _unary("hard_swish"),
    "LOG_SOFTMAX": _unary("log_softmax"),
    "RESHAPE": reshape,
    "SQUEEZE": reshape,
    "EXPAND_DIMS": reshape,
    "TRANSPOSE": transpose,
    "BATCH_MATMUL": batch_matmul,
    "QUANTIZE": quantize,
    "DEQUANTIZE": dequantize,
    **NHWC_CONVERTERS,
    **RECURRENT_CONVERTERS,
    **SLICE_CONVERTERS,
}
