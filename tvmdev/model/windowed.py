"""Shape inference and kernel params of the windowed ops: conv2d and the pools (NCHW)."""

from __future__ import annotations

from typing import Any

from .shapes import Shape, ShapeError


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


def _check_nchw(x: Shape | None, what: str) -> Shape:
    assert x is not None
    if len(x) != 4:
        raise ShapeError(f"{what} must be 4-D NCHW, got {list(x)}")
    return x


def _conv_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    x = _check_nchw(shapes[0], "X")
    w = _check_nchw(shapes[1], "W")
    n, c, h, wd = x
    m, cg, kh, kw = w
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
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (m,):
        raise ShapeError(f"B must have shape [{m}], got {list(shapes[2])}")
    sh, sw = attrs["strides"]
    pt, pl, pb, pr = attrs["pads"]
    dh, dw = attrs["dilations"]
    if min(sh, sw, dh, dw) < 1 or min(pt, pl, pb, pr) < 0:
        raise ShapeError("strides and dilations must be >= 1 and pads >= 0")
    oh = _window(h, kh, sh, pt, pb, dh, False, "conv2d")
    ow = _window(wd, kw, sw, pl, pr, dw, False, "conv2d")
    return {"N": n, "C": c, "H": h, "W": wd, "M": m, "KH": kh, "KW": kw, "OH": oh, "OW": ow,
            "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl, "dil_h": dh,
            "dil_w": dw, "group": group}


def conv_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of conv2d."""
    d = _conv_dims(shapes, attrs)
    return (d["N"], d["M"], d["OH"], d["OW"])


def conv_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of conv2d."""
    return dict(_conv_dims(shapes, attrs))


def _pool_dims(shapes: list[Shape | None], attrs: dict[str, Any], avg: bool) -> dict[str, int]:
    n, c, h, w = _check_nchw(shapes[0], "X")
    kh, kw = attrs["kernel_shape"]
    sh, sw = attrs["strides"]
    pt, pl, pb, pr = attrs["pads"]
    dh, dw = (1, 1) if avg else attrs["dilations"]
    if min(kh, kw, sh, sw, dh, dw) < 1 or min(pt, pl, pb, pr) < 0:
        raise ShapeError("kernel_shape, strides and dilations must be >= 1 and pads >= 0")
    if pt >= kh or pb >= kh or pl >= kw or pr >= kw:
        raise ShapeError("pads must be smaller than the kernel")
    ceil = bool(attrs["ceil_mode"])
    oh = _window(h, kh, sh, pt, pb, dh, ceil, "pool")
    ow = _window(w, kw, sw, pl, pr, dw, ceil, "pool")
    return {"N": n, "C": c, "H": h, "W": w, "KH": kh, "KW": kw, "OH": oh, "OW": ow,
            "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl,
            "pad_bottom": pb, "pad_right": pr, "dil_h": dh, "dil_w": dw,
            "count_include_pad": int(attrs.get("count_include_pad", 0))}


def maxpool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of maxpool."""
    d = _pool_dims(shapes, attrs, False)
    return (d["N"], d["C"], d["OH"], d["OW"])


def avgpool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of avgpool."""
    d = _pool_dims(shapes, attrs, True)
    return (d["N"], d["C"], d["OH"], d["OW"])


def maxpool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    """The kernel params of maxpool."""
    return _pool_dims(shapes, attrs, False)


def avgpool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    """The kernel params of avgpool."""
    return _pool_dims(shapes, attrs, True)
