"""TFLite's NHWC operators mapped natively (no transposes): CONV_2D and DEPTHWISE_CONV_2D
(weights as TFLite stores them), the pools, and the ops that move or reduce regions:
PAD / PADV2, MEAN, CONCATENATION, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR.

TFLite's SAME padding puts the odd pad at the end, as ONNX's ``SAME_UPPER`` does (TFLite
``ComputePaddingWithOffset``), so it maps onto ``auto_pad``, resolved against the input's
shape when the model is loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Unsupported
from .tflite_context import Context, activation, activation_after, chain, with_activation

_PADDING = {0: "SAME_UPPER", 1: "VALID"}  # tflite.Padding: SAME, VALID


def _window(ctx: Context, o: Any, dilations: bool) -> dict[str, Any]:
    """strides, dilations and auto_pad of a windowed op's options (only what differs
    from the defaults, to keep the description short); a step below 1 refused."""
    if o is None:
        raise Unsupported("no options")
    pad = _PADDING.get(int(o.Padding()))
    if pad is None:
        raise Unsupported(f"padding {o.Padding()}")
    attrs: dict[str, Any] = {"auto_pad": pad}
    strides = [int(o.StrideH()), int(o.StrideW())]
    if strides != [1, 1]:
        attrs["strides"] = strides
    if dilations:
        dil = [int(o.DilationHFactor()), int(o.DilationWFactor())]
        if dil != [1, 1]:
            attrs["dilations"] = dil
    ctx.b.check_steps(ctx.op.kind, ctx.out(), attrs)
    return attrs


def _operands(ctx: Context) -> list[str]:
    """Input, weights and the optional bias."""
    return [ctx.inp(0), ctx.inp(1)] + ([ctx.inp(2)] if ctx.has(2) else [])


def conv2d(ctx: Context) -> None:
    """CONV_2D: conv2d in NHWC with TFLite's OHWI weights; SAME/VALID as auto_pad; the
    fused activation as its `activation`; grouped when the filter has fewer input
    channels than the input (group = C / filter channels)."""
    o = ctx.options("Conv2DOptions")
    attrs = {"layout": "NHWC", **_window(ctx, o, dilations=True)}
    ins = _operands(ctx)
    xs, ws = ctx.b.shapes[ins[0]], ctx.b.shapes[ins[1]]
    if len(xs) == 4 and len(ws) == 4 and ws[3] and xs[3] != ws[3] and xs[3] % ws[3] == 0:
        attrs["group"] = xs[3] // ws[3]
    chain(ctx, [("conv2d", ins, with_activation(attrs, activation(o, ctx.int8())))])


def depthwise_conv2d(ctx: Context) -> None:
    """DEPTHWISE_CONV_2D: depthwise_conv2d (NHWC, filter [1, KH, KW, C * multiplier]).
    The multiplier is derived from the shapes (filter channels / input channels), as
    TFLite's kernels do, since the option is redundant and not always right."""
    o = ctx.options("DepthwiseConv2DOptions")
    attrs = _window(ctx, o, dilations=True)
    ins = _operands(ctx)
    xs, ws = ctx.b.shapes[ins[0]], ctx.b.shapes[ins[1]]
    if len(xs) == 4 and len(ws) == 4 and xs[3]:
        if ws[3] % xs[3]:
            raise Unsupported(f"{ws[3]} filter channels for {xs[3]} input channels")
        if ws[3] != xs[3]:
            attrs["depth_multiplier"] = ws[3] // xs[3]
    chain(ctx, [("depthwise_conv2d", ins, with_activation(attrs, activation(o, ctx.int8())))])


def _tflm_pad(padding: int, size: int, k: int, stride: int) -> int:
    """TFLM's padding before the input of TRANSPOSE_CONV (ComputePaddingHeightWidth over
    the output: the conv that would map the output back onto the input)."""
    out = (size + stride - 1) // stride if padding == 0 else (size + stride - k) // stride
    return max(0, (out - 1) * stride + k - size) // 2 if out >= 0 else 0


def transpose_conv(ctx: Context) -> None:
    """TRANSPOSE_CONV (operands: output shape, weights [M, KH, KW, C], input, optional
    bias): transpose_conv2d in NHWC, the padding before the input as TFLM computes it from
    the output's size (the output tensor's, which TFLM reads), the pads after what makes
    that size; the fused activation its `activation`."""
    o = ctx.options("TransposeConvOptions")
    if o is None or int(o.Padding()) not in _PADDING:
        raise Unsupported("no options" if o is None else f"padding {o.Padding()}")
    x, w = ctx.inp(2), ctx.inp(1)
    xs, ws = ctx.b.shapes[x], ctx.b.shapes[w]
    out = ctx.g.tensors[ctx.op.outputs[0]].shape
    strides = [int(o.StrideH()), int(o.StrideW())]
    ctx.b.check_steps(ctx.op.kind, ctx.out(), {"strides": strides})
    if len(xs) != 4 or len(ws) != 4 or len(out) != 4:
        raise Unsupported(f"input {list(xs)}, weights {list(ws)}, output {list(out)}")
    pads = [_tflm_pad(int(o.Padding()), out[d], ws[d], strides[d - 1]) for d in (1, 2)]
    pads += [(xs[d] - 1) * strides[d - 1] + ws[d] - pads[d - 1] - out[d] for d in (1, 2)]
    attrs = {"layout": "NHWC", "strides": strides, "pads": pads}
    ins = [x, w] + ([_tconv_bias(ctx)] if ctx.has(3) else [])
    chain(ctx, [("transpose_conv2d", ins, with_activation(attrs, activation(o, ctx.int8())))])


def _tconv_bias(ctx: Context) -> str:
    """TRANSPOSE_CONV's bias; a constant int16 one of a 16x8 operator widened to int64, as
    TFLM's kernel widens it before its int64 sums."""
    t = ctx.tensor(3)
    if t.dtype != "int16" or ctx.b.dtypes.get(ctx.inp(2)) != "int16" or t.data is None:
        return ctx.inp(3)
    return ctx.b.constant(f"{t.cname}_int64", t.data, "int64", t.quant)


def _pool(op: str) -> Any:
    def convert(ctx: Context) -> None:
        o = ctx.options("Pool2DOptions")
        attrs = {"layout": "NHWC", **_window(ctx, o, dilations=False),
                 "kernel_shape": [int(o.FilterHeight()), int(o.FilterWidth())]}
        act = activation(o, ctx.int8())
        if ctx.int8():  # the int8 kernels clamp to the activation's range
            chain(ctx, [(op, [ctx.inp(0)], with_activation(attrs, act))])
        else:
            chain(ctx, [(op, [ctx.inp(0)], attrs), activation_after(act)])
    convert.__doc__ = (f"{op}: NHWC, SAME/VALID as auto_pad (padding left out of averages); "
                       "a fused activation as an operator after it (float32) or as its "
                       "`activation` (int8).")
    return convert


def _pad_value(ctx: Context) -> float:
    """PADV2's constant value operand as a real number (an int8 or int16 one dequantized:
    it must be quantized as the output, as TFLM requires)."""
    t = ctx.tensor(2)
    if t.data is None or t.data.size != 1:
        raise Unsupported("padding value not a constant scalar")
    value = np.ravel(t.data)[0]
    if t.dtype not in ("int8", "int16"):
        return float(value)
    q, qo = t.quant, ctx.g.tensors[ctx.op.outputs[0]].quant
    if q is None or qo is None or len(q.scale) != 1 or (q.scale, q.zero_point) != (
            qo.scale, qo.zero_point):
        raise Unsupported(f"{t.dtype} padding value not quantized as the output, as TFLM "
                          "requires")
    # Exactly the int8 (or int16) value again when the pad quantizes it as the output.
    return float(np.float32(q.scale[0]) * np.float32(int(value) - q.zero_point[0]))


def pad(ctx: Context) -> None:
    """PAD and PADV2: constant padding; the paddings operand [rank, 2] (begin, end per
    dim) becomes pads [begins..., ends...]; PADV2's constant value operand its value (a
    real number: the int8 kernel quantizes it as the output; PAD's 0 is the output's zero
    point)."""
    p = ctx.ints(1, "paddings")
    attrs: dict[str, Any] = {"pads": p[0::2] + p[1::2]}
    if ctx.has(2):
        value = _pad_value(ctx)
        if value:
            attrs["value"] = value
    chain(ctx, [("pad", [ctx.inp(0)], attrs)])


def mean(ctx: Context) -> None:
    """MEAN: mean over the constant axes operand (repeats dropped), keep_dims as
    keepdims."""
    o = ctx.options("ReducerOptions")
    x = ctx.inp(0)
    rank = len(ctx.b.shapes[x])
    axes: list[int] = []
    for a in ctx.ints(1, "axes"):
        a = a + rank if a < 0 else a
        if a not in axes:
            axes.append(a)
    keep = int(bool(o.KeepDims())) if o is not None else 0
    chain(ctx, [("mean", [x], {"axes": axes, "keepdims": keep})])


def concatenation(ctx: Context) -> None:
    """CONCATENATION: concat along the axis; a fused activation as an operator after it
    (float32; TFLM refuses one on int8, and so does tvmdev)."""
    o = ctx.options("ConcatenationOptions")
    if o is None or not ctx.op.inputs:
        raise Unsupported("no options" if o is None else "no inputs")
    ins = [ctx.inp(i) for i in range(len(ctx.op.inputs))]
    act = activation(o)
    if ctx.int8() and act != "NONE":
        raise Unsupported(f"fused {act} on int8 (TFLM refuses it too)")
    chain(ctx, [("concat", ins, {"axis": int(o.Axis())}), activation_after(act)])


def _resize(op: str, options: str) -> Any:
    def convert(ctx: Context) -> None:
        o = ctx.options(options)
        size = ctx.ints(1, "size")
        x = ctx.inp(0)
        if len(size) != 2 or len(ctx.b.shapes[x]) != 4:
            raise Unsupported(f"size {size} of a {len(ctx.b.shapes[x])}-D input")
        attrs: dict[str, Any] = {"size": size}
        if o is not None and o.AlignCorners():
            attrs["align_corners"] = 1
        if o is not None and o.HalfPixelCenters():
            attrs["half_pixel_centers"] = 1
        if op == "resize_bilinear" and len(attrs) == 3:
            raise Unsupported("align_corners with half_pixel_centers (TFLM refuses the pair)")
        chain(ctx, [(op, [x], attrs)])
    convert.__doc__ = (f"{op} to the constant size [OH, OW] (a 4-D input, as TFLM "
                       "requires), align_corners and half_pixel_centers from the options.")
    return convert


CONVERTERS = {
    "CONV_2D": conv2d,
    "DEPTHWISE_CONV_2D": depthwise_conv2d,
    "AVERAGE_POOL_2D": _pool("avgpool2d"),
    "MAX_POOL_2D": _pool("maxpool2d"),
    "PAD": pad,
    "PADV2": pad,
    "MEAN": mean,
    "CONCATENATION": concatenation,
    "RESIZE_NEAREST_NEIGHBOR": _resize("resize_nearest", "ResizeNearestNeighborOptions"),
    "RESIZE_BILINEAR": _resize("resize_bilinear", "ResizeBilinearOptions"),
    "TRANSPOSE_CONV": transpose_conv,
}
