"""PAD first: a constant PAD folded into the convolution, depthwise convolution or max pool
that reads it, as TinyEngine does (issue 25).

The window kernels (portable and CMSIS-NN's alike) treat every input position a window
reaches outside the input as padding, on all four sides: pad_top and pad_left move the
windows, and the output size, which the params carry, makes the bottom and right
padding. A PAD in front of such an operator is therefore the operator with larger
padding, where what the kernel does with an outside position equals reading the PAD's
fill value there:

- int8 and int16 conv2d and depthwise_conv2d: a kernel adds nothing for an outside
  position, which equals reading a value whose offset term is zero, ``(x - zp) * w = 0``:
  the fill must be the input's zero point (and the PAD's input and output share one
  quantization, so the operator requantizes as before).
- float32 conv2d and depthwise_conv2d: a skipped tap equals adding ``0.0 * w``, which is
  ``±0.0`` for a finite weight and leaves the accumulator's value unchanged (only a zero
  accumulator's sign may differ): the fill must be 0.0 and every weight finite.
- max pool: the kernels take the maximum over the positions inside the input only.
  With the PAD the window holds those positions S and some copies of the fill v, and
  the result is ``clamp(max(S ∪ {v}))``. If S is not empty and v <= every value the
  input can hold (int8 -128, int16 -32768), ``max(S ∪ {v}) = max(S)``. The float32
  kernels, as TFLM's reference, start the maximum at the least finite float32 and keep a
  value only when it is greater, so a fill of -FLT_MAX (infinities are no attribute
  value) changes nothing there either. If
  instead v <= the clamp's minimum lo: either ``max(S ∪ {v}) = max(S)``, or it is v and
  max(S) < v <= lo, and both clamp to lo. S is not empty when no window lies wholly in
  the padding, which :func:`_windows_reach_input` checks for every output position.
  The pool takes no ceil_mode (ONNX), and its pads stay smaller than its window.
- average pool: never (TFLite divides by the number of positions inside the input, so
  padding is not a value there).

Anything else keeps the PAD: a PAD with other readers, or feeding a graph output, or
padding the batch or the channels, or on another device than its reader. The fold is
exact, so it prints nothing; ``plan.json`` notes it on the operator that took the
padding, and ``tvmdev aot`` lists the folds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..model.graph import Model, Operator

FOLDS_INTO = ("conv2d", "depthwise_conv2d", "maxpool2d")
# The least value an input of each dtype holds (float32: where the kernels start a max).
LOWEST: dict[str, float] = {"int8": -128, "int16": -32768,
                            "float32": float(np.finfo(np.float32).min)}


def _spatial_dims(model: Model, op: Operator) -> tuple[int, int]:
    """The H and W dims of ``op``'s 4-D input."""
    layout = "NHWC" if op.op == "depthwise_conv2d" else op.attr_dict.get("layout", "NCHW")
    return (1, 2) if layout == "NHWC" else (2, 3)


def _pad_widths(model: Model, pad: Operator, consumer: Operator
                ) -> tuple[tuple[int, int, int, int] | None, str | None]:
    """The PAD's [top, left, bottom, right] in the consumer's layout, or why there is
    none (a rank other than 4, negative pads, padding outside H and W)."""
    x = model.tensors[pad.inputs[0] or ""]
    pads = tuple(pad.attr_dict["pads"])
    if len(x.shape) != 4 or len(pads) != 8:
        return None, f"the PAD's input is {len(x.shape)}-D, not 4-D"
    if min(pads) < 0:
        return None, "the PAD crops (a negative pad)"
    h, w = _spatial_dims(model, consumer)
    other = [d for d in range(4) if d not in (h, w) and (pads[d] or pads[4 + d])]
    if other:
        return None, f"the PAD pads dim {other[0]} (batch or channels), not only H and W"
    return (pads[h], pads[w], pads[4 + h], pads[4 + w]), None


def _same_quant(model: Model, a: str, b: str) -> bool:
    qa, qb = model.tensors[a].quant, model.tensors[b].quant
    return qa == qb


def _fill_problem(model: Model, pad: Operator, consumer: Operator, dtype: str
                  ) -> str | None:
    """Why the PAD's fill is not what ``consumer`` pads with (None: it is)."""
    fill = model.operator_params(pad)[1]["value"]
    x = model.tensors[pad.inputs[0] or ""]
    if consumer.op == "maxpool2d":
        lo = max(LOWEST[dtype], model.operator_params(consumer)[1].get("act_min",
                                                                         LOWEST[dtype]))
        if fill <= lo:
            return None
        return (f"the PAD's value {fill:g} is above {lo:g}, the least value the max pool "
                "keeps (it leaves the padding out)")
    if dtype == "float32":
        weights = model.constants.get(consumer.inputs[1] or "")
        if fill != 0.0:
            return f"the PAD's value {fill} is not 0.0 (the convolution pads with 0.0)"
        if weights is None or not np.all(np.isfinite(weights)):
            return "the weights are not constant and finite (0.0 times them is not 0.0)"
        return None
    zp = x.quant.zero_point[0] if x.quant is not None else 0
    if fill != zp:
        return (f"the PAD's value {fill} is not the input's zero point {zp} (the "
                "convolution pads with the zero point)")
    return None


def decline(model: Model, pad: Operator, readers: dict[str, list[Operator]]
            ) -> tuple[Operator | None, str]:
    """The operator ``pad`` folds into, or None and why it does not."""
    out = pad.outputs[0]
    users = readers.get(out, [])
    if pad.op != "pad" or pad.attr_dict.get("mode", "constant") != "constant":
        return None, "not a constant PAD"
    if out in model.outputs or out in model.states:
        return None, "the PAD's output is a graph output"
    if len(users) != 1:
        return None, f"the PAD's output has {len(users)} readers"
    consumer = users[0]
    if consumer.op not in FOLDS_INTO:
        return None, (f"its reader is {consumer.op} (a PAD folds into "
                      f"{', '.join(FOLDS_INTO[:-1])} and {FOLDS_INTO[-1]} only)")
    if consumer.inputs[0] != out or out in consumer.inputs[1:]:
        return None, f"the PAD feeds the {consumer.op}'s weights"
    if consumer.device != pad.device:
        return None, "the PAD and its reader are on different devices"
    if consumer.op == "maxpool2d" and consumer.attr_dict.get("ceil_mode", 0):
        return None, "the max pool rounds its output size up (ceil_mode)"
    dtype = model.op_dtype(pad)
    if dtype not in LOWEST or model.op_dtype(consumer) != dtype:
        return None, f"a {dtype} PAD before a {model.op_dtype(consumer)} {consumer.op}"
    if dtype != "float32" and not _same_quant(model, pad.inputs[0] or "", out):
        return None, "the PAD's input and output are quantized differently"
    quant = model.tensors[out].quant
    if quant is not None and len(quant.zero_point) != 1:
        return None, "the PAD's output has a zero point per channel"
    widths, why = _pad_widths(model, pad, consumer)
    if widths is None:
        return None, why or ""
    problem = _fill_problem(model, pad, consumer, dtype)
    return (None, problem) if problem else (consumer, "")


def _windows_reach_input(p: dict[str, Any]) -> bool:
    """Whether every window of pool params ``p`` holds a position inside the input."""
    for size, k, s, pad, dil, out in (
            (p["H"], p["KH"], p["stride_h"], p["pad_top"], p.get("dil_h", 1), p["OH"]),
            (p["W"], p["KW"], p["stride_w"], p["pad_left"], p.get("dil_w", 1), p["OW"])):
        for o in range(out):
            start = o * s - pad
            if not any(0 <= start + j * dil < size for j in range(k)):
                return False
    return True


def _folded(model: Model, pad: Operator, consumer: Operator) -> Operator | None:
    """``consumer`` reading the PAD's input with the PAD's padding added to its own, or
    None where it would compute another output shape or is no valid operator."""
    widths, _ = _pad_widths(model, pad, consumer)
    assert widths is not None
    attrs = consumer.attr_dict
    old = tuple(attrs.get("pads") or (0, 0, 0, 0))
    pads = tuple(a + b for a, b in zip(old, widths, strict=True))
    new_attrs = (*((k, v) for k, v in consumer.attrs if k != "pads"), ("pads", pads))
    given = tuple((k, v) for k, v in consumer.given if k not in ("pads", "auto_pad"))
    op = replace(consumer, inputs=(pad.inputs[0], *consumer.inputs[1:]), attrs=new_attrs,
                 given=(*given, ("pads", list(pads))) if consumer.given else ())
    try:
        _, params = model.operator_params(op)
    except (ValueError, ArithmeticError):
        return None
    out = model.tensors[consumer.outputs[0]].shape
    h, w = _spatial_dims(model, consumer)
    if (params["OH"], params["OW"]) != (out[h], out[w]):
        return None
    if consumer.op == "maxpool2d" and not _windows_reach_input(params):
        return None
    return op


def fold_pads(model: Model) -> tuple[Model, dict[str, str]]:
    """``model`` with every PAD that folds exactly folded into its reader, and the folds:
    the reader's name -> the PAD's name."""
    readers: dict[str, list[Operator]] = {}
    for op in model.operators:
        for t in dict.fromkeys(op.inputs):
            if t is not None:
                readers.setdefault(t, []).append(op)
    folds: dict[str, str] = {}
    replaced: dict[str, Operator] = {}
    dropped: set[str] = set()
    for pad in model.operators:
        if pad.op != "pad":
            continue
        consumer, _ = decline(model, pad, readers)
        if consumer is None or consumer.name in replaced:
            continue
        new = _folded(model, pad, consumer)
        if new is None:
            continue
        replaced[consumer.name] = new
        dropped.add(pad.name)
        folds[consumer.name] = pad.name
    if not folds:
        return model, {}
    gone = {op.outputs[0] for op in model.operators if op.name in dropped}
    ops = [replaced.get(op.name, op) for op in model.operators if op.name not in dropped]
    return replace(model, operators=tuple(replace(op, index=i) for i, op in enumerate(ops)),
                   tensors={n: t for n, t in model.tensors.items() if n not in gone}), folds
