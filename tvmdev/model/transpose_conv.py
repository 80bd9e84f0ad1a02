"""transpose_conv2d (TFLite's TRANSPOSE_CONV, ONNX's ConvTranspose): each input pixel
scatters its channels, through the weights, onto a window of the output; input row iy
and filter row ky land on output row iy * stride_h - pad_top + ky * dil_h (columns
likewise), and what lands outside the output is dropped. pads are [top, left, bottom,
right]; bottom and right may be negative: output rows past the last the input reaches
(ONNX's output_padding, a TFLite output taller than the input needs), which get the bias
alone. The output is (H - 1) * stride_h + (KH - 1) * dil_h + 1 - top - bottom rows high.

Weights are ONNX's [C, M / group, KH, KW] with layout NCHW, TFLite's
[M, KH, KW, C / group] with NHWC. The kernels compute each output value once, as a
sum over the input pixels that reach it (no accumulator scratch), so the params are
conv2d's structs (``tvmk_conv2d_params``, ``tvmk_conv2d_s8_params``) read with these
meanings. int8 (NHWC only) is TFLM's reference_integer_ops::TransposeConv: int32 sums of
``(x + input_offset) * w`` (weights symmetric), plus the bias, requantized per channel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .opdef import Attr, OpDef
from .shapes import ACTIVATIONS, Shape, ShapeError, activation_code
from .windowed import LAYOUTS


def transpose_conv_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    """The dims, strides, pads and group of a transpose_conv2d, checked."""
    x, w = shapes[0], shapes[1]
    assert x is not None and w is not None
    layout = attrs["layout"]
    if len(x) != 4 or len(w) != 4:
        raise ShapeError(f"transpose_conv2d takes a 4-D X and W, got {list(x)} and {list(w)}")
    n, h, wd, c = x if layout == "NHWC" else (x[0], x[2], x[3], x[1])
    g = attrs["group"]
    m, kh, kw, cg = w if layout == "NHWC" else (w[1] * g, w[2], w[3], w[0] // max(g, 1))
    if g < 1 or c % g or m % g or cg * g != c or (layout == "NCHW" and w[0] != c):
        raise ShapeError(f"transpose_conv2d: W {list(w)} does not fit {c} input channels in "
                         f"{g} groups")
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (m,):
        raise ShapeError(f"B must have shape [{m}], got {list(shapes[2])}")
    for key, n_values in (("strides", 2), ("dilations", 2), ("pads", 4)):
        if attrs[key] and len(attrs[key]) != n_values:
            raise ShapeError(f"transpose_conv2d: {key} takes {n_values} values, got "
                             f"{list(attrs[key])}")
    (sh, sw), (dh, dw) = attrs["strides"] or (1, 1), attrs["dilations"] or (1, 1)
    pt, pl, pb, pr = attrs["pads"] or (0, 0, 0, 0)
    if min(sh, sw, dh, dw) < 1 or min(pt, pl) < 0:
        raise ShapeError("transpose_conv2d: strides and dilations must be >= 1, the top and "
                         "left pads >= 0")
    oh = (h - 1) * sh + (kh - 1) * dh + 1 - pt - pb
    ow = (wd - 1) * sw + (kw - 1) * dw + 1 - pl - pr
    if oh < 1 or ow < 1:
        raise ShapeError(f"transpose_conv2d: the output would be {oh} x {ow}")
    return {"N": n, "C": c, "H": h, "W": wd, "M": m, "KH": kh, "KW": kw, "OH": oh, "OW": ow,
            "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl, "dil_h": dh,
            "dil_w": dw, "group": g}


def transpose_conv_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of transpose_conv2d."""
    d = transpose_conv_dims(shapes, attrs)
    if attrs["layout"] == "NHWC":
        return (d["N"], d["OH"], d["OW"], d["M"])
    return (d["N"], d["M"], d["OH"], d["OW"])


def transpose_conv_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                          ) -> dict[str, Any]:
    """The float kernel's params (``tvmk_conv2d_params``' fields)."""
    return {**transpose_conv_dims(shapes, attrs), "layout": LAYOUTS.index(attrs["layout"]),
            "activation": activation_code(attrs)}


def transpose_conv_sums(x: np.ndarray, w: np.ndarray, d: dict[str, int], dtype: Any
                        ) -> np.ndarray:
    """The sums before bias of NHWC ``x`` and OHWI ``w`` (in ``dtype``), N x OH x OW x M."""
    g, m = d["group"], d["M"]
    mg, cg = m // g, d["C"] // g
    acc = np.zeros((d["N"], d["OH"], d["OW"], m), dtype)
    xs = x.astype(dtype)
    for ky in range(d["KH"]):
        oy = np.arange(d["H"]) * d["stride_h"] - d["pad_top"] + ky * d["dil_h"]
        iy = np.flatnonzero((oy >= 0) & (oy < d["OH"]))
        for kx in range(d["KW"]):
            ox = np.arange(d["W"]) * d["stride_w"] - d["pad_left"] + kx * d["dil_w"]
            ix = np.flatnonzero((ox >= 0) & (ox < d["OW"]))
            if not len(iy) or not len(ix):
                continue
            patch = xs[:, iy][:, :, ix]
            for k in range(g):
                wk = w[k * mg:(k + 1) * mg, ky, kx, :].astype(dtype)
                acc[:, oy[iy][:, None], ox[ix][None, :], k * mg:(k + 1) * mg] += (
                    patch[..., k * cg:(k + 1) * cg] @ wk.T)
    return acc


def transpose_conv_reference(args: list[np.ndarray | None], attrs: dict[str, Any],
                             shapes: list[Shape | None]) -> np.ndarray:
    """float transpose_conv2d (before the fused activation)."""
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    assert x is not None and w is not None
    d = transpose_conv_dims(shapes, attrs)
    if attrs["layout"] == "NCHW":  # [C, M / g, KH, KW] -> [M, KH, KW, C / g]
        g = d["group"]
        w = w.reshape(g, d["C"] // g, d["M"] // g, d["KH"], d["KW"]).transpose(0, 2, 3, 4, 1)
        x, w = x.transpose(0, 2, 3, 1), w.reshape(d["M"], d["KH"], d["KW"], d["C"] // g)
    y = transpose_conv_sums(x, w, d, np.float64)
    if b is not None:
        y = y + b
    return y if attrs["layout"] == "NHWC" else y.transpose(0, 3, 1, 2)


TRANSPOSE_CONV_OPS = [
    OpDef("transpose_conv2d", ("X", "W", "B"), frozenset({"B"}), ("Y",),
          {"strides": Attr("ints", ()), "dilations": Attr("ints", ()), "pads": Attr("ints", ()),
           "group": Attr("int", 1), "layout": Attr("str", "NCHW", choices=LAYOUTS),
           "activation": Attr("str", "NONE", choices=ACTIVATIONS)},
          "tvmk_conv2d_params", transpose_conv_infer, transpose_conv_params,
          doc="transposed convolution, NCHW (W [C, M/group, KH, KW]) or NHWC (W OHWI); pads "
              "[top, left, bottom, right], bottom and right may be negative"),
]
