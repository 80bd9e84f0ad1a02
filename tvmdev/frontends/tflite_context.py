"""What every TFLite converter works with: the source operator (:class:`Context`), its
fused activation, and :func:`chain` to emit tvmdev operators in a row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TvmdevError
from .graph import Builder, Unsupported

if TYPE_CHECKING:
    from .tflite import TfGraph, TfOp, TfTensor

# TFLite's ActivationFunctionType codes as the `activation` attribute of tvmdev's ops.
FUSED = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH"}
_FUSED_UNSUPPORTED = {5: "SIGN_BIT"}

Step = tuple[str, list[str], dict[str, Any]]  # op, inputs after the previous result, attrs

# A fused activation as an operator of its own, after an op without an `activation`
# attribute (the pools, concat).
_AFTER: dict[str, Step] = {
    "NONE": ("", [], {}),
    "RELU": ("relu", [], {}),
    "RELU6": ("relu6", [], {}),
    "RELU_N1_TO_1": ("clip", [], {"min": -1.0, "max": 1.0}),
    "TANH": ("tanh", [], {}),
}


@dataclass(frozen=True)
class Context:
    """One source operator being converted."""

    b: Builder
    g: TfGraph
    op: TfOp

    def tensor(self, i: int) -> TfTensor:
        """The source tensor of operand ``i``; Unsupported when the operator lacks it."""
        if not self.has(i):
            raise Unsupported(f"operand {i} missing")
        return self.g.tensors[self.op.inputs[i]]

    def has(self, i: int) -> bool:
        """Whether optional operand ``i`` is given."""
        return len(self.op.inputs) > i and self.op.inputs[i] >= 0

    def inp(self, i: int) -> str:
        """The tvmdev tensor of operand ``i``; a constant is added on first use."""
        t = self.tensor(i)
        if t.data is not None:
            if t.dtype not in ("float32", "int8", "int16", "int32", "int64"):
                raise Unsupported(f"{t.dtype} operand")
            return self.b.constant(t.cname, t.data, t.dtype, t.quant)
        if t.cname not in self.b.shapes:
            raise TvmdevError(f"operator {self.op.index} ({self.op.kind}) reads tensor "
                              f"'{t.name}', which is neither an input, a constant nor "
                              "written before it", str(self.b.source))
        return t.cname

    def ints(self, i: int, what: str) -> list[int]:
        """The values of constant integer operand ``i`` (paddings, axes), flattened."""
        t = self.tensor(i)
        if t.data is None or t.data.dtype.kind not in "iu":
            raise Unsupported(f"{what} not a constant integer tensor")
        return [int(v) for v in np.ravel(t.data)]

    def int8(self) -> bool:
        """Whether the operator's output is int8 or int16 (its integer form then runs)."""
        return self.g.tensors[self.op.outputs[0]].dtype in ("int8", "int16")

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


def activation(options: Any, int8: bool = False) -> str:
    """The fused activation of an operator's options (``NONE`` without options) as the
    `activation` attribute's value. On int8, TANH is refused: TFLM's int8 kernels clamp
    to the full range for it (they compute no tanh)."""
    code = int(options.FusedActivationFunction()) if options is not None else 0
    if code not in FUSED:
        raise Unsupported("fused " + _FUSED_UNSUPPORTED.get(code, f"activation {code}"))
    if int8 and FUSED[code] == "TANH":
        raise Unsupported("fused TANH on int8, which TFLM's int8 kernels ignore")
    return FUSED[code]


def activation_after(act: str) -> Step:
    """A fused activation as a step of its own (empty for NONE)."""
    return _AFTER[act]


def with_activation(attrs: dict[str, Any], act: str) -> dict[str, Any]:
    """``attrs`` with ``activation`` set, left out when NONE (the default)."""
    return {**attrs, "activation": act} if act != "NONE" else attrs


def chain(ctx: Context, steps: list[Step]) -> None:
    """Emit ``steps``; each after the first takes the previous result as its first input;
    the last writes the operator's output (with its dtype and quantisation). Steps with an
    empty op are skipped."""
    steps = [s for s in steps if s[0]]
    out = ctx.g.tensors[ctx.op.outputs[0]]
    prev: str | None = None
    for k, (op, inputs, attrs) in enumerate(steps):
        args = ([prev] if prev else []) + inputs
        if k == len(steps) - 1:
            ctx.b.emit(ctx.op.kind, op, args, out.cname, attrs, out.dtype, out.quant)
        else:
            prev = ctx.b.fresh(f"{out.cname}_{op}")
            ctx.b.emit(ctx.op.kind, op, args, prev, attrs)
