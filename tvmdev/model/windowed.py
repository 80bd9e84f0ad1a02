"""Shape inference and kernel params of the windowed ops: conv2d, depthwise_conv2d and
the pools, in NCHW (ONNX) or NHWC (TFLite) layout, 2-D or 1-D (a rank-3 input, NCW or
NWC, computed as 2-D with H = 1).

:func:`resolve_window` turns the attributes as written (1-D lists, auto_pad) into explicit
2-D ones before shape inference: strides, dilations and kernel_shape of two values, and
pads ``[top, left, bottom, right]``.

Weights follow their layout's convention: OIHW ``[M, C / group, KH, KW]`` for NCHW (ONNX),
OHWI ``[M, KH, KW, C / group]`` for NHWC (TFLite), and TFLite's ``[1, KH, KW, C * mult]``
for depthwise_conv2d.
"""

from __future__ import annotations

from typing import Any

from .limits import INT32_MAX
from .shapes import Shape, ShapeError, activation_code

LAYOUTS = ("NCHW", "NHWC")


def _window(size: int, k: int, stride: int, pad0: int, pad1: int, dil: int,
            ceil_mode: bool, what: str) -> int:
    span = dil * (k - 1) + 1
    room = size + pad0 + pad1 - span
    if room < 0:
        raise ShapeError(f"{what}: the window ({span}) is larger than the padded input "
                         f"({size + pad0 + pad1})")
    out = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad0:
        out -= 1  # the last window would start in the padding
    return out


AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _as_2d(x: Shape, layout: str) -> Shape:
    """A rank-3 tensor (NCW, or NWC for NHWC) as the 4-D one with H = 1."""
    if len(x) == 3:
        return (x[0], 1, x[1], x[2]) if layout == "NHWC" else (x[0], x[1], 1, x[2])
    return x


def _nchw(x: Shape | None, layout: str, what: str) -> tuple[int, int, int, int]:
    """(N, C, H, W) of a 4-D (or 1-D spatial, rank-3) tensor in ``layout``."""
    assert x is not None
    if len(x) not in (3, 4):
        raise ShapeError(f"{what} must be 4-D {layout} (or 3-D for 1-D), got {list(x)}")
    x = _as_2d(x, layout)
    if layout == "NHWC":
        return x[0], x[3], x[1], x[2]
    return x[0], x[1], x[2], x[3]


def _out_shape(n: int, c: int, h: int, w: int, layout: str, rank: int = 4) -> Shape:
    if rank == 3:
        return (n, w, c) if layout == "NHWC" else (n, c, w)
    return (n, h, w, c) if layout == "NHWC" else (n, c, h, w)


def _kernel_hw(shapes: list[Shape | None], attrs: dict[str, Any], op: str
               ) -> tuple[int, int]:
    """The window of a windowed op, from its weights or its kernel_shape (resolved)."""
    w = shapes[1] if len(shapes) > 1 else None
    if op == "depthwise_conv2d" and w is not None and len(w) == 4:
        return w[1], w[2]
    if op == "conv2d" and w is not None and len(w) in (3, 4):
        w4 = _as_2d(w, attrs["layout"])
        return (w4[1], w4[2]) if attrs["layout"] == "NHWC" else (w4[2], w4[3])
    if attrs.get("kernel_shape") is not None:
        kh, kw = attrs["kernel_shape"]
        return kh, kw
    raise ShapeError(f"W must be {len(shapes[0] or ())}-D, got {list(w or ())}")


def _two(key: str, value: tuple[int, ...] | None, spatial: int, fill: int
         ) -> tuple[int, ...] | None:
    """A per-spatial-dim attribute as two values (H first); () is the default."""
    if value is None:
        return None
    if value == ():
        return (fill, fill)
    if len(value) != spatial:
        raise ShapeError(f"attribute '{key}' must have {spatial} values for a "
                         f"{spatial}-D window, got {len(value)}")
    return tuple(value) if spatial == 2 else (fill, *value)


def _auto_pads(size: tuple[int, int], k: tuple[int, int], st: tuple[int, ...],
               dil: tuple[int, ...], mode: str) -> tuple[int, int, int, int]:
    """Explicit [top, left, bottom, right] pads for auto_pad SAME_UPPER, SAME_LOWER or
    VALID (ONNX): SAME pads so that the output is ceil(input / stride), the odd pad at the
    end (UPPER) or the beginning (LOWER)."""
    if mode == "VALID":
        return (0, 0, 0, 0)
    begin, end = [], []
    for n, kk, s, d in zip(size, k, st, dil, strict=True):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (kk - 1) * d + 1 - n)
        small = total // 2
        begin.append(small if mode == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return (begin[0], begin[1], end[0], end[1])


def resolve_window(op: str, shapes: list[Shape | None], attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    """The attributes of a windowed op as its kernels take them: 2-D strides, dilations,
    kernel_shape and pads, auto_pad resolved into pads (and then NOTSET)."""
    x = shapes[0]
    assert x is not None
    layout = attrs.get("layout", "NHWC")
    if len(x) not in ((4,) if op == "depthwise_conv2d" else (3, 4)):
        raise ShapeError(f"X must be 4-D {layout}" + (" (or 3-D for 1-D)" if op !=
                         "depthwise_conv2d" else "") + f", got {list(x)}")
    sd = len(x) - 2
    a = dict(attrs)
    for key, fill in (("strides", 1), ("dilations", 1), ("kernel_shape", 1)):
        if key in a:
            a[key] = _two(key, a[key], sd, fill)
    pads = a["pads"]
    if pads == ():
        pads = (0,) * (2 * sd)
    if len(pads) != 2 * sd:
        raise ShapeError(f"attribute 'pads' must have {2 * sd} values for a {sd}-D window, "
                         f"got {len(pads)}")
    a["pads"] = tuple(pads) if sd == 2 else (0, pads[0], 0, pads[1])
    mode = a.get("auto_pad", "NOTSET")
    if mode != "NOTSET":
        if any(a["pads"]):
            raise ShapeError(f"pads {list(pads)} and auto_pad {mode} are both given")
        if min(a["strides"] + a.get("dilations", (1, 1))) < 1:
            raise ShapeError("strides and dilations must be >= 1")
        n, c, h, w = _nchw(x, layout, "X")
        a["pads"] = _auto_pads((h, w), _kernel_hw(shapes, a, op), a["strides"],
                               a.get("dilations", (1, 1)), mode)
        a["auto_pad"] = "NOTSET"
    return a


def _spatial(d: dict[str, int], attrs: dict[str, Any], what: str) -> dict[str, int]:
    """Output size, strides, pads and dilations of a window of d["KH"] x d["KW"]."""
    sh, sw = attrs["strides"]
    pt, pl, pb, pr = attrs["pads"]
    dh, dw = attrs.get("dilations", (1, 1))
    if min(sh, sw, dh, dw) < 1 or min(pt, pl, pb, pr) < 0:
        raise ShapeError("strides and dilations must be >= 1 and pads >= 0")
    if d["KH"] * d["KW"] > INT32_MAX:
        raise ShapeError(f"{what}: a window of {d['KH']} x {d['KW']} has more than 2^31-1 "
                         "elements; the kernels count a window's elements in int32_t")
    ceil = bool(attrs.get("ceil_mode", 0))
    sp = {"OH": _window(d["H"], d["KH"], sh, pt, pb, dh, ceil, what),
          "OW": _window(d["W"], d["KW"], sw, pl, pr, dw, ceil, what),
          "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl,
          "pad_bottom": pb, "pad_right": pr, "dil_h": dh, "dil_w": dw}
    for dim, size, k, s, p0, p1, dil, out in (
            ("H", d["H"], d["KH"], sh, pt, pb, dh, sp["OH"]),
            ("W", d["W"], d["KW"], sw, pl, pr, dw, sp["OW"])):
        reach = max(size + p0 + p1, (out - 1) * s + dil * (k - 1) + 1)
        if reach > INT32_MAX:
            raise ShapeError(f"{what}: along {dim} the windows reach {reach} positions "
                             f"(input {size}, pads {p0} and {p1}, window {k}, dilation {dil},"
                             f" stride {s}), more than 2^31-1; the kernels index them with "
                             "int32_t")
    return sp


def _bias(shapes: list[Shape | None], m: int) -> None:
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (m,):
        raise ShapeError(f"B must have shape [{m}], got {list(shapes[2])}")


def _conv_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    layout = attrs["layout"]
    n, c, h, wd = _nchw(shapes[0], layout, "X")
    x, w = shapes[0], shapes[1]
    assert x is not None and w is not None
    if len(w) != len(x):
        raise ShapeError(f"W must be {len(x)}-D like X, got {list(w)}")
    w = _as_2d(w, layout)
    m, cg, kh, kw = (w[0], w[3], w[1], w[2]) if layout == "NHWC" else w
    group = attrs["group"]
    if group < 1 or c % group or m % group:
        raise ShapeError(f"group {group} must divide the input channels {c} and the output "
                         f"channels {m}")
    if cg != c // group:
        raise ShapeError(f"W is {list(w)}: expected {c // group} input channels per group "
                         f"(X has {c} channels, group {group})")
    if attrs["kernel_shape"] is not None and list(attrs["kernel_shape"]) != [kh, kw]:
        raise ShapeError(f"kernel_shape {list(attrs['kernel_shape'])} does not match W "
                         f"{list(w)}")
    _bias(shapes, m)
    d = {"N": n, "C": c, "H": h, "W": wd, "M": m, "KH": kh, "KW": kw}
    sp = _spatial(d, attrs, "conv2d")
    return {**d, "OH": sp["OH"], "OW": sp["OW"], "stride_h": sp["stride_h"],
            "stride_w": sp["stride_w"], "pad_top": sp["pad_top"], "pad_left": sp["pad_left"],
            "dil_h": sp["dil_h"], "dil_w": sp["dil_w"], "group": group,
            "layout": LAYOUTS.index(layout), "activation": activation_code(attrs)}


def conv_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of conv2d."""
    d = _conv_dims(shapes, attrs)
    return _out_shape(d["N"], d["M"], d["OH"], d["OW"], attrs["layout"], len(shapes[0] or ()))


def conv_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of conv2d."""
    return dict(_conv_dims(shapes, attrs))


def _depthwise_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    n, c, h, wd = _nchw(shapes[0], "NHWC", "input")
    w = shapes[1]
    assert w is not None
    if len(w) != 4 or w[0] != 1:
        raise ShapeError(f"W must be [1, KH, KW, C * depth_multiplier], got {list(w)}")
    _, kh, kw, m = w
    mult = attrs["depth_multiplier"]
    if mult < 1 or m != c * mult:
        raise ShapeError(f"W is {list(w)}: expected {c * mult} output channels (input "
                         f"channels {c} x depth_multiplier {mult})")
    _bias(shapes, m)
    d = {"N": n, "C": c, "H": h, "W": wd, "KH": kh, "KW": kw}
    sp = _spatial(d, attrs, "depthwise_conv2d")
    return {**d, "mult": mult, "OH": sp["OH"], "OW": sp["OW"], "stride_h": sp["stride_h"],
            "stride_w": sp["stride_w"], "pad_top": sp["pad_top"], "pad_left": sp["pad_left"],
            "dil_h": sp["dil_h"], "dil_w": sp["dil_w"], "activation": activation_code(attrs)}


def depthwise_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of depthwise_conv2d (NHWC)."""
    d = _depthwise_dims(shapes, attrs)
    return (d["N"], d["OH"], d["OW"], d["C"] * d["mult"])


def depthwise_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                      ) -> dict[str, Any]:
    """The kernel params of depthwise_conv2d."""
    return _depthwise_dims(shapes, attrs)


def _pool_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    n, c, h, w = _nchw(shapes[0], attrs["layout"], "X")
    kh, kw = attrs["kernel_shape"]
    if min(kh, kw) < 1:
        raise ShapeError("kernel_shape must be >= 1")
    pt, pl, pb, pr = attrs["pads"]
    if pt >= kh or pb >= kh or pl >= kw or pr >= kw:
        raise ShapeError("pads must be smaller than the kernel")
    d = {"N": n, "C": c, "H": h, "W": w, "KH": kh, "KW": kw}
    sp = _spatial(d, attrs, "pool")
    return {**d, **sp, "count_include_pad": int(attrs.get("count_include_pad", 0)),
            "layout": LAYOUTS.index(attrs["layout"])}


def pool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of maxpool2d and avgpool2d."""
    d = _pool_dims(shapes, attrs)
    return _out_shape(d["N"], d["C"], d["OH"], d["OW"], attrs["layout"], len(shapes[0] or ()))


def pool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of maxpool2d and avgpool2d."""
    d = _pool_dims(shapes, attrs)
    order = ("N", "C", "H", "W", "KH", "KW", "OH", "OW", "stride_h", "stride_w", "pad_top",
             "pad_left", "pad_bottom", "pad_right", "dil_h", "dil_w", "count_include_pad",
             "layout")
    return {k: d[k] for k in order}
