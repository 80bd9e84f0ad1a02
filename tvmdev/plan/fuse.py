"""Fusions that save a pass over memory (issue 25): an int8 CONV_2D whose output only an
ADD reads becomes one ``conv2d_add`` operator (:mod:`tvmdev.model.s8.fused`).

The fused kernel computes each of the convolution's int8 values exactly as TFLM writes
them (requantized for the intermediate tensor's quantization, clamped to the conv's
activation), then TFLM's int8 ADD of that value and the residual. Nothing is rounded
otherwise than in TFLM's two kernels, so the rewrite is exact by construction; the
intermediate tensor is gone (its buffer and the pass that wrote it and read it back),
and the fused kernel may write its output over the residual where the residual dies
there (the memory plan's in-place rule: ``inplace: [R]``).

The rewrite happens where the fused kernel does not lose instructions: where both the
convolution and the ADD run on the same library as the fused kernel (the portable one;
a board library's convolution, CMSIS-NN's, is faster than any portable one). Anything
else keeps the two operators, as does a conv output that is a graph output or has other
readers, a broadcast ADD, a constant residual, or an ADD on another device.
``plan.json`` notes each fusion on the fused operator, and ``tvmdev aot`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..model.graph import Model, Operator
from ..model.shapes import ShapeError

# Why a fusion of this conv and add would lose (None: it would not).
Allow = Callable[[Operator, Operator], str | None]


def _per_tensor(model: Model, *names: str) -> bool:
    quants = [model.tensors[n].quant for n in names]
    return all(q is not None and not q.per_channel for q in quants)


def decline(model: Model, conv: Operator, readers: dict[str, list[Operator]]
            ) -> tuple[Operator | None, str]:
    """The ADD ``conv`` fuses with, or None and why it does not."""
    out = conv.outputs[0]
    users = readers.get(out, [])
    if conv.op != "conv2d" or model.op_dtype(conv) != "int8":
        return None, "not an int8 conv2d"
    if conv.attr_dict.get("layout") != "NHWC":
        return None, "not NHWC"
    if out in model.outputs or out in model.states:
        return None, "the conv's output is a graph output"
    if len(users) != 1 or users[0].op != "add":
        return None, "the conv's output is not read by one ADD alone"
    add = users[0]
    if list(add.inputs).count(out) != 1:
        return None, "the ADD reads the conv's output twice"
    residual = next(t for t in add.inputs if t != out)
    if residual is None or residual in model.constants:
        return None, "the ADD's other input is a constant"
    if add.device != conv.device:
        return None, "the conv and the ADD are on different devices"
    shapes = {model.tensors[t].shape for t in (out, residual, add.outputs[0])}
    if len(shapes) != 1 or model.op_dtype(add) != "int8":
        return None, "the ADD broadcasts, or is not int8"
    if not _per_tensor(model, out, residual, add.outputs[0]):
        return None, "a tensor of the ADD is not quantized per tensor"
    return add, ""


def _fused(model: Model, conv: Operator, add: Operator) -> Operator | None:
    """The ``conv2d_add`` operator of ``conv`` and ``add`` (in ``conv``'s place), or None
    where its params cannot be derived."""
    out = conv.outputs[0]
    residual = next(t for t in add.inputs if t != out)
    mid = model.tensors[out].quant
    assert mid is not None
    attrs = {k: v for k, v in conv.attrs if k != "activation"}
    attrs.update(conv_activation=conv.attr_dict.get("activation", "NONE"),
                 activation=add.attr_dict.get("activation", "NONE"),
                 mid_scale=float(mid.scale[0]), mid_zero_point=int(mid.zero_point[0]))
    bias = conv.inputs[2] if len(conv.inputs) > 2 else None
    inputs = (conv.inputs[0], conv.inputs[1], residual, *(() if bias is None else (bias,)))
    op = replace(conv, op="conv2d_add", inputs=inputs, outputs=add.outputs,
                 attrs=tuple(attrs.items()), given=())
    try:
        model.operator_params(op)
    except (ShapeError, ValueError, ArithmeticError):
        return None
    return op


def fuse_residual_adds(model: Model, allow: Allow) -> tuple[Model, dict[str, str]]:
    """``model`` with each conv2d and the ADD reading it fused where that is exact and
    ``allow`` finds it does not lose, and the fusions: the conv's name -> the ADD's."""
    readers: dict[str, list[Operator]] = {}
    producer: dict[str, int] = {}
    for op in model.operators:
        for t in dict.fromkeys(op.inputs):
            if t is not None:
                readers.setdefault(t, []).append(op)
        producer.update((t, op.index) for t in op.outputs)
    fusions: dict[str, str] = {}
    placed: dict[int, Operator] = {}  # operator index -> the fused operator run there
    dropped: set[int] = set()
    mids: set[str] = set()  # the convs' outputs, gone
    for conv in model.operators:
        add, _ = decline(model, conv, readers)
        if (add is None or add.name in fusions.values() or add.index in placed
                or allow(conv, add) is not None):
            continue
        new = _fused(model, conv, add)
        if new is None:
            continue
        residual = new.inputs[2] or ""
        # Run where both X and the residual exist: the conv's place if the residual is
        # computed before it, else the ADD's.
        at = conv.index if producer.get(residual, -1) < conv.index else add.index
        placed[at] = new
        dropped.add(add.index if at == conv.index else conv.index)
        fusions[conv.name] = add.name
        mids.add(conv.outputs[0])
    if not fusions:
        return model, {}
    ops = [placed.get(op.index, op) for op in model.operators if op.index not in dropped]
    return replace(model, operators=tuple(replace(op, index=i) for i, op in enumerate(ops)),
                   tensors={n: t for n, t in model.tensors.items() if n not in mids}), fusions
