"""Fusions that save a pass over memory (issue 25): an int8 CONV_2D whose output only an
ADD reads becomes one ``conv2d_add`` operator, and a DEPTHWISE_CONV_2D whose output only
a 1x1 CONV_2D reads one ``depthwise_pointwise`` operator (:mod:`tvmdev.model.s8.fused`).

The fused kernel computes each of the convolution's int8 values exactly as TFLM writes
them (requantized for the intermediate tensor's quantization, clamped to the conv's
activation), then TFLM's int8 ADD of that value and the residual. Nothing is rounded
otherwise than in TFLM's two kernels, so the rewrite is exact by construction; the
intermediate tensor is gone (its buffer and the pass that wrote it and read it back),
and the fused kernel may write its output over the residual where the residual dies
there (the memory plan's in-place rule: ``inplace: [R]``).

The rewrite happens where ``allow`` finds the pair does not lose (:mod:`.fusing`: the
pair and the fused operator on one library, the portable one or CMSIS-NN, whose
conv2d_add runs its convolution a tile of rows at a time). A conv output that is a graph
output or has other readers, a broadcast ADD, a constant residual, or an ADD on another
device keeps the two operators.

``depthwise_pointwise`` runs the depthwise convolution one output row at a time into its
scratch and the 1x1 convolution on that row, each as TFLM computes it: the intermediate
tensor is gone, and a row of it is all that is held. It is made where that needs less
memory than the two operators (:func:`row_saves`: MobileNetV2's projections, which
narrow the channels; not MobileNetV1's 1x1s, which widen them), on the same libraries'
condition. The ADD fusion goes first: a 1x1 projection whose ADD it took is no longer a
conv2d. ``plan.json`` notes each fusion on the fused operator, and ``tvmdev aot`` lists
them.
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


def _readers(model: Model) -> tuple[dict[str, list[Operator]], dict[str, int]]:
    """Each tensor's readers, and the index of the operator computing it."""
    readers: dict[str, list[Operator]] = {}
    producer: dict[str, int] = {}
    for op in model.operators:
        for t in dict.fromkeys(op.inputs):
            if t is not None:
                readers.setdefault(t, []).append(op)
        producer.update((t, op.index) for t in op.outputs)
    return readers, producer


def _rewritten(model: Model, placed: dict[int, Operator], dropped: set[int], mids: set[str]
               ) -> Model:
    """``model`` with the fused operators ``placed`` (by the index they run at), the
    operators ``dropped`` and the intermediate tensors ``mids`` gone."""
    ops = [placed.get(op.index, op) for op in model.operators if op.index not in dropped]
    return replace(model, operators=tuple(replace(op, index=i) for i, op in enumerate(ops)),
                   tensors={n: t for n, t in model.tensors.items() if n not in mids})


def fuse_residual_adds(model: Model, allow: Allow) -> tuple[Model, dict[str, str]]:
    """``model`` with each conv2d and the ADD reading it fused where that is exact and
    ``allow`` finds it does not lose, and the fusions: the conv's name -> the ADD's."""
    readers, producer = _readers(model)
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
    return _rewritten(model, placed, dropped, mids), fusions


def _pointwise(model: Model, op: Operator) -> str | None:
    """Why ``op`` is not an int8 1x1 conv2d (stride 1, no padding, one group) with a bias
    (None: it is)."""
    a = op.attr_dict
    if op.op != "conv2d" or model.op_dtype(op) != "int8" or a.get("layout") != "NHWC":
        return "its reader is not an int8 NHWC conv2d"
    w = model.tensors[op.inputs[1] or ""].shape
    if (len(w) != 4 or w[1:3] != (1, 1) or tuple(a["strides"]) != (1, 1)
            or any(a["pads"]) or tuple(a["dilations"]) != (1, 1) or a.get("group", 1) != 1):
        return "its reader is not a 1x1 conv2d of stride 1, without padding or groups"
    return None


def decline_depthwise(model: Model, dw: Operator, readers: dict[str, list[Operator]]
                      ) -> tuple[Operator | None, str]:
    """The 1x1 conv2d ``dw`` fuses with, or None and why it does not."""
    out = dw.outputs[0]
    users = readers.get(out, [])
    if dw.op != "depthwise_conv2d" or model.op_dtype(dw) != "int8":
        return None, "not an int8 depthwise_conv2d"
    if out in model.outputs or out in model.states:
        return None, "the depthwise's output is a graph output"
    if len(users) != 1:
        return None, f"the depthwise's output has {len(users)} readers"
    pw = users[0]
    why = _pointwise(model, pw)
    if why is not None:
        return None, why
    if pw.inputs[0] != out or out in pw.inputs[1:]:
        return None, "the depthwise's output is the 1x1's weights"
    if pw.device != dw.device:
        return None, "the depthwise and the 1x1 are on different devices"
    if len(dw.inputs) < 3 or dw.inputs[2] is None or len(pw.inputs) < 3 or pw.inputs[2] is None:
        return None, "a convolution without a bias"
    if not _per_tensor(model, out):
        return None, "the depthwise's output is not quantized per tensor"
    return pw, ""


def row_saves(model: Model, dw: Operator, pw: Operator) -> str | None:
    """Why the fused operator would not need less memory there than the two (None: it
    would). Alone, the depthwise holds X and the intermediate, the 1x1 the intermediate
    and Y; fused, X, Y and one row: less where ``min(X, Y) + row <= intermediate``."""
    x, mid, y = (model.tensors[t].nbytes for t in (dw.inputs[0] or "", dw.outputs[0],
                                                   pw.outputs[0]))
    shape = model.tensors[dw.outputs[0]].shape
    row = shape[2] * shape[3]
    if min(x, y) + row <= mid:
        return None
    return (f"{min(x, y)} bytes of input or output and a {row}-byte row are no less than "
            f"the {mid}-byte intermediate tensor")


def _fused_dwpw(model: Model, dw: Operator, pw: Operator) -> Operator | None:
    """The ``depthwise_pointwise`` operator of ``dw`` and ``pw`` (in ``dw``'s place), or
    None where its params cannot be derived."""
    mid = model.tensors[dw.outputs[0]].quant
    assert mid is not None
    attrs = {k: v for k, v in dw.attrs if k != "activation"}
    attrs.update(dw_activation=dw.attr_dict.get("activation", "NONE"),
                 activation=pw.attr_dict.get("activation", "NONE"),
                 mid_scale=float(mid.scale[0]), mid_zero_point=int(mid.zero_point[0]))
    op = replace(dw, op="depthwise_pointwise", inputs=(*dw.inputs[:3], *pw.inputs[1:3]),
                 outputs=pw.outputs, attrs=tuple(attrs.items()), given=())
    try:
        model.operator_params(op)
    except (ShapeError, ValueError, ArithmeticError):
        return None
    return op


def fuse_depthwise_pointwise(model: Model, allow: Allow) -> tuple[Model, dict[str, str]]:
    """``model`` with each depthwise_conv2d and the 1x1 conv2d reading it fused where that
    is exact, needs less memory (:func:`row_saves`) and ``allow`` finds it does not lose,
    and the fusions: the depthwise's name -> the 1x1's."""
    readers, _ = _readers(model)
    fusions: dict[str, str] = {}
    placed: dict[int, Operator] = {}
    dropped: set[int] = set()
    mids: set[str] = set()
    for dw in model.operators:
        pw, _ = decline_depthwise(model, dw, readers)
        if pw is None or row_saves(model, dw, pw) is not None or allow(dw, pw) is not None:
            continue
        new = _fused_dwpw(model, dw, pw)
        if new is None:
            continue
        placed[dw.index] = new
        dropped.add(pw.index)
        fusions[dw.name] = pw.name
        mids.add(dw.outputs[0])
    if not fusions:
        return model, {}
    return _rewritten(model, placed, dropped, mids), fusions
