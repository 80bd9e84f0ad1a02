"""TFLite's recurrent operators, whose variable tensors become the model's persistent
state: SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM. An LSTM is taken as TFLM runs it, the
standard LSTM only: its peephole, projection and layer-norm variants, and one without an
input gate (CIFG), are refused, as TFLM refuses them."""

from __future__ import annotations

from .graph import Unsupported
from .tflite_context import FUSED, Context, activation, chain

# UNIDIRECTIONAL_SEQUENCE_LSTM's operands TFLM requires absent, by variant.
_LSTM_VARIANTS = {"peephole": (9, 10, 11), "projection": (16, 17), "layer norm": (20, 21, 22, 23)}
# The operands tvmdev's lstm takes, in its order (TFLite's indices).
_LSTM_OPERANDS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15)


def _state(ctx: Context, i: int) -> str:
    """Operand ``i``, a variable tensor, as a model state."""
    t = ctx.tensor(i)
    if not t.variable or t.data is not None:
        raise Unsupported(f"operand {i} is not a variable tensor (TFLM requires one)")
    return ctx.b.add_state(t.cname, t.shape, t.dtype, t.quant)


def svdf(ctx: Context) -> None:
    """SVDF: ``rank`` and the fused activation (which TFLM's int8 kernel ignores)."""
    o = ctx.options("SVDFOptions")
    if o is None:
        raise Unsupported("no options")
    act = activation(o, False)
    ins = [ctx.inp(0), ctx.inp(1), ctx.inp(2), ctx.inp(3) if ctx.has(3) else None,
           _state(ctx, 4)]
    attrs = {"rank": int(o.Rank())} | ({"activation": act} if act != "NONE" else {})
    out = ctx.g.tensors[ctx.op.outputs[0]]
    ctx.b.emit(ctx.op.kind, "svdf", ins, out.cname, attrs, out.dtype, out.quant)


def lstm(ctx: Context) -> None:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: ``time_major`` and ``cell_clip``; the cell gate's
    activation must be TANH (TFLM computes no other)."""
    o = ctx.options("UnidirectionalSequenceLSTMOptions")
    if o is None or len(ctx.op.inputs) != 24:
        raise Unsupported(f"{len(ctx.op.inputs)} operands, not 24" if o else "no options")
    for variant, operands in _LSTM_VARIANTS.items():
        if any(ctx.has(i) for i in operands):
            raise Unsupported(f"{variant}: TFLM runs the standard LSTM only")
    if not (ctx.has(1) and ctx.has(5) and ctx.has(12)):
        raise Unsupported("no input gate (CIFG): TFLM runs the standard LSTM only")
    code = int(o.FusedActivationFunction())
    if FUSED.get(code) != "TANH":
        raise Unsupported(f"cell activation {FUSED.get(code, code)}: TFLM computes TANH only")
    if o.DiagonalRecurrentTensors():
        raise Unsupported("diagonal recurrent tensors")
    ins = [ctx.inp(i) for i in _LSTM_OPERANDS] + [_state(ctx, 18), _state(ctx, 19)]
    attrs = {"time_major": int(bool(o.TimeMajor())), "cell_clip": float(o.CellClip())}
    chain(ctx, [("lstm", ins, attrs)])


CONVERTERS = {"SVDF": svdf, "UNIDIRECTIONAL_SEQUENCE_LSTM": lstm}
