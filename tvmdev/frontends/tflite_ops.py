"""TFLite operators mapped onto tvmdev's: one small converter per operator kind, in a table.

A converter reads the operator's operands and options through a :class:`Context` and adds
tvmdev operators to the builder; it raises :class:`Unsupported` (before adding anything)
for a variant it cannot map. A kind missing from the table is reported as unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .graph import Builder, Unsupported

if TYPE_CHECKING:
    from .tflite import TfGraph, TfOp, TfTensor

# Shape arithmetic folded into the RESHAPE it feeds (see tflite._folded).
SHAPE_KINDS = frozenset({"SHAPE", "STRIDED_SLICE", "PACK"})

# TFLite's fused activation codes (ActivationFunctionType): the tvmdev op after it.
_ACTIVATIONS: dict[int, str | None] = {0: None, 1: "relu", 4: "tanh"}
_ACTIVATION_NAMES = {2: "RELU_N1_TO_1", 3: "RELU6", 5: "SIGN_BIT"}


@dataclass(frozen=True)
class Context:
    """One source operator being converted."""

    b: Builder
    g: TfGraph
    op: TfOp

    def tensor(self, i: int) -> TfTensor:
        """The source tensor of operand ``i`` (``-1``: absent)."""
        return self.g.tensors[self.op.inputs[i]]

    def has(self, i: int) -> bool:
        """Whether optional operand ``i`` is given."""
        return len(self.op.inputs) > i and self.op.inputs[i] >= 0

    def inp(self, i: int) -> str:
        """The tvmdev tensor of operand ``i``; a constant is added on first use."""
        t = self.tensor(i)
        if t.data is not None:
            if t.dtype != "float32":
                raise Unsupported(f"{t.dtype} operand")
            return self.b.constant(t.cname, t.data)
        return t.cname

    def out(self) -> str:
        """The tvmdev tensor of the (one) output."""
        return self.g.tensors[self.op.outputs[0]].cname

    def options(self, cls_name: str) -> Any:
        """The operator's builtin options as ``tflite.<cls_name>`` (None if absent)."""
        import tflite

        table = self.op.raw.BuiltinOptions()
        if table is None:
            return None
        opts = getattr(tflite, cls_name)()
        opts.Init(table.Bytes, table.Pos)
        return opts

    def static_shape(self) -> list[int]:
        """The output's static shape, its first dim -1 when the model marks it dynamic
        (a batch), so a reshape follows an --input-shape."""
        t = self.g.tensors[self.op.outputs[0]]
        shape = list(t.shape)
        if shape and t.signature and t.signature[0] == -1:
            shape[0] = -1
        return shape


Step = tuple[str, list[str | None], dict[str, Any]]


def _activation(code: int) -> str | None:
    if code not in _ACTIVATIONS:
        raise Unsupported("fused " + _ACTIVATION_NAMES.get(code, str(code)))
    return _ACTIVATIONS[code]


def _chain(ctx: Context, steps: list[Step]) -> None:
    """Emit ``steps``; each after the first takes the previous result as its first input;
    the last writes the operator's output."""
    steps = [s for s in steps if s[0]]
    prev: str | None = None
    for k, (op, inputs, attrs) in enumerate(steps):
        last = k == len(steps) - 1
        dest = ctx.out() if last else ctx.b.fresh(f"{ctx.out()}_{op}")
        ctx.b.emit(ctx.op.kind, op, ([prev] if prev else []) + inputs, dest, attrs)
        prev = dest


def fully_connected(ctx: Context) -> None:
    """FULLY_CONNECTED: gemm with weights [out, in] (transB=1) and the bias as C; the
    input flattened to 2-D first, the output reshaped back under keep_num_dims."""
    o = ctx.options("FullyConnectedOptions")
    act = _activation(o.FusedActivationFunction() if o else 0)
    if o is not None and o.WeightsFormat() != 0:
        raise Unsupported("shuffled weights")
    x, w = ctx.inp(0), ctx.inp(1)
    bias = ctx.inp(2) if ctx.has(2) else None
    xs, k = ctx.b.shapes[x], ctx.b.shapes[w][-1]
    steps: list[Step] = []
    if len(xs) != 2:
        steps.append(("reshape", [x], {"shape": [-1, k]}))
    gemm_in: list[str | None] = [w, bias] if bias else [w]
    steps.append(("gemm", gemm_in if steps else [x, *gemm_in], {"transB": 1}))
    if o is not None and o.KeepNumDims() and len(xs) > 2:
        steps.append(("reshape", [], {"shape": [*xs[:-1], ctx.b.shapes[w][0]]}))
    steps.append((act or "", [], {}))
    _chain(ctx, steps)


def _binary(op: str, options: str) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        o = ctx.options(options)
        act = _activation(o.FusedActivationFunction() if o else 0)
        _chain(ctx, [(op, [ctx.inp(0), ctx.inp(1)], {}), (act or "", [], {})])
    convert.__doc__ = f"{op.upper()}: numpy broadcasting, a fused activation after it."
    return convert


def _unary(op: str) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        _chain(ctx, [(op, [ctx.inp(0)], {})])
    convert.__doc__ = f"the elementwise {op}."
    return convert


def softmax(ctx: Context) -> None:
    """SOFTMAX over the last axis; beta 1 only."""
    o = ctx.options("SoftmaxOptions")
    if o is not None and o.Beta() != 1.0:
        raise Unsupported(f"beta {o.Beta():g}")
    _chain(ctx, [("softmax", [ctx.inp(0)], {"axis": -1})])


def reshape(ctx: Context) -> None:
    """RESHAPE, SQUEEZE, EXPAND_DIMS: a reshape to the output's static shape (the shape
    operand, and any shape arithmetic computing it, is folded)."""
    _chain(ctx, [("reshape", [ctx.inp(0)], {"shape": ctx.static_shape()})])


def transpose(ctx: Context) -> None:
    """TRANSPOSE by a constant permutation."""
    perm = ctx.tensor(1).data
    if perm is None:
        raise Unsupported("permutation not constant")
    _chain(ctx, [("transpose", [ctx.inp(0)], {"perm": [int(p) for p in np.ravel(perm)]})])


def batch_matmul(ctx: Context) -> None:
    """BATCH_MATMUL without adjoints: matmul (numpy batching)."""
    o = ctx.options("BatchMatMulOptions")
    if o is not None and (o.AdjX() or o.AdjY()):
        raise Unsupported("adj_x or adj_y")
    _chain(ctx, [("matmul", [ctx.inp(0), ctx.inp(1)], {})])


CONVERTERS: dict[str, Callable[[Context], None]] = {
    "FULLY_CONNECTED": fully_connected,
    "ADD": _binary("add", "AddOptions"),
    "MUL": _binary("mul", "MulOptions"),
    "RELU": _unary("relu"),
    "LOGISTIC": _unary("sigmoid"),
    "TANH": _unary("tanh"),
    "SOFTMAX": softmax,
    "RESHAPE": reshape,
    "SQUEEZE": reshape,
    "EXPAND_DIMS": reshape,
    "TRANSPOSE": transpose,
    "BATCH_MATMUL": batch_matmul,
}
