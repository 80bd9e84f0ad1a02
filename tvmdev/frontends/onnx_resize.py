"""ONNX's Resize of a 4-D NCHW tensor's H and W, modes nearest and linear, mapped onto
tvmdev's resize_nearest and resize_bilinear (NHWC: a transpose on each side, a reshape
when C is 1) where the arithmetic is the same; scales or sizes known at import.

linear: coordinate_transformation_mode half_pixel (pytorch_half_pixel where no output dim
is 1), align_corners and asymmetric, as TFLM's bilinear computes them. nearest: those and
tf_half_pixel_for_nn, with every nearest_mode: the position (v + 0.5 with the half-pixel
modes) * ratio, less 0.5 for half_pixel, rounded as the mode says (round_prefer_floor:
the ceiling of the position less 0.5; round_prefer_ceil: the floor of it plus 0.5),
clamped to the input. With scales, the ratio of input to output positions is 1 / scale
(the kernels' scale_h, scale_w), as ONNX computes it; with sizes, in / out.
keep_aspect_ratio_policy not_larger and not_smaller take one scale, the least or the
greatest of sizes / in over the axes, and the sizes it gives (rounded, halves up).

The rest goes to tvmdev's ``resize`` (ONNX's own arithmetic, NCHW, no transposes;
tvmdev/model/resize_interp.py): cubic, antialias, half_pixel_symmetric, pytorch_half_pixel
to an output dim of 1, tf_crop_and_resize (its roi known at import), and scales computed
at run time. Those the kernel reads each run, and the output's shape is the static one
ONNX's shape inference gives (the model's declared output): a run whose scales give
another shape fails. Refused in one
line: sizes computed at run time (an int64 input), a resize of N or C.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.resize_interp import COORDS, MODES, NEAREST_MODES
from .graph import Unsupported
from .onnx_context import Context, chain

_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
           "tf_half_pixel_for_nn")
# nearest_mode -> resize_nearest's rounding and what it adds to the position
_ROUNDING = {"floor": ("floor", 0.0), "ceil": ("ceil", 0.0),
             "round_prefer_floor": ("ceil", -0.5), "round_prefer_ceil": ("floor", 0.5)}
_LINEAR = {"half_pixel": (0, 1), "pytorch_half_pixel": (0, 1), "align_corners": (1, 0),
           "asymmetric": (0, 0)}


def _full(values: list[Any], axes: list[int] | None, keep: list[Any]) -> list[Any]:
    """Values for all 4 dims: ``values`` of ``axes`` (opset 18), ``keep`` elsewhere."""
    if axes is None:
        return values
    if len(values) != len(axes):
        return []
    out = list(keep)
    for a, v in zip(axes, values, strict=True):
        out[a] = v
    return out


def _sizes(ctx: Context, x: tuple[int, ...]) -> tuple[list[int], list[float] | None]:
    """The output's H and W, and ONNX's scales of H and W when given."""
    scales = ctx.const(2) if ctx.has(2) else None
    if ctx.has(2) and scales is None:
        raise Unsupported("scales computed at run time")
    axes = ctx.attr("axes")
    axes = None if axes is None else [int(a) % 4 for a in axes]
    if scales is not None and scales.size:
        s = _full([float(v) for v in np.ravel(scales)], axes, [1.0] * 4)
        if len(s) != 4 or s[:2] != [1.0, 1.0] or min(s[2:]) <= 0:
            raise Unsupported(f"scales {s} (N and C must stay)")
        return [int(np.floor(n * v)) for n, v in zip(x[2:], s[2:], strict=True)], s[2:]
    if not ctx.has(3) or ctx.const(3) is None:
        raise Unsupported("sizes computed at run time" if ctx.has(3) else
                          "neither scales nor sizes")
    sizes = _full(ctx.ints(3, "sizes"), axes, list(x))
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    kept: list[float] | None = None
    if policy != "stretch" and len(sizes) == 4:  # one scale, as ONNX's reference takes it
        dims = axes if axes is not None else list(range(4))
        ratios = [sizes[d] / x[d] for d in dims]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        sizes = [int(scale * x[d] + 0.5) if d in dims else x[d] for d in range(4)]
        kept = [scale, scale]
    if len(sizes) != 4 or sizes[:2] != list(x[:2]) or min(sizes) < 1:
        raise Unsupported(f"sizes {sizes} (N and C must stay)")
    return sizes[2:], kept


def _check_attrs(ctx: Context) -> None:
    if ctx.opset < 11:
        raise Unsupported(f"opset {ctx.opset} (its coordinates are not ONNX 11's)")
    mode = ctx.attr("mode", "nearest")
    coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
    rounding = ctx.attr("nearest_mode", "round_prefer_floor")
    if mode not in MODES or coord not in COORDS or (
            mode == "nearest" and rounding not in NEAREST_MODES):
        raise Unsupported(f"mode {mode}, coordinate_transformation_mode {coord}" + (
            f", nearest_mode {rounding}" if mode == "nearest" else ""))
    axes = ctx.attr("axes")
    if axes is not None and len({int(a) % 4 for a in axes}) != len(axes):
        raise Unsupported(f"axes {list(axes)}")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise Unsupported(f"keep_aspect_ratio_policy {policy}")


def _ratio(n: int, o: int, scale: float | None, align: int, coord: str) -> float:
    """The kernel's ratio of input to output positions (0: the kernel's own)."""
    if coord == "align_corners":  # TFLM's own with align_corners, else given
        return 0.0 if align else (n - 1) / (o - 1) if o > 1 else n / o
    return 1.0 / scale if scale is not None else n / o


def _nearest(coord: str, rounding: str) -> dict[str, Any]:
    """resize_nearest's attributes for ONNX's coordinate and nearest modes."""
    how, add = _ROUNDING[rounding]
    half = coord in ("half_pixel", "pytorch_half_pixel", "tf_half_pixel_for_nn")
    offset = add - (0.5 if coord in ("half_pixel", "pytorch_half_pixel") else 0.0)
    return {"half_pixel_centers": int(half), "rounding": how,
            **({"offset": offset} if offset else {})}


def _tflite_form(ctx: Context, x: tuple[int, ...]) -> bool:
    """Whether TFLite's resizes compute this Resize: 4-D, scales or sizes known at import,
    modes they have, no antialias."""
    mode = ctx.attr("mode", "nearest")
    coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
    rounding = ctx.attr("nearest_mode", "round_prefer_floor")
    known = (coord in _COORDS and rounding in _ROUNDING) if mode == "nearest" else (
        mode == "linear" and coord in _LINEAR)
    scales = ctx.const(2)
    run_time = (ctx.has(2) and scales is None) or (
        ctx.has(3) and ctx.const(3) is None and not (scales is not None and scales.size))
    return len(x) == 4 and known and not run_time and not ctx.attr("antialias", 0)


def resize(ctx: Context) -> None:
    """Resize of H and W: resize_nearest or resize_bilinear in NHWC where TFLite's
    arithmetic is ONNX's, else tvmdev's resize (NCHW)."""
    _check_attrs(ctx)
    x = ctx.shape(0)
    if not _tflite_form(ctx, x):
        _interp(ctx, x)
        return
    mode = ctx.attr("mode", "nearest")
    coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
    rounding = ctx.attr("nearest_mode", "round_prefer_floor")
    (oh, ow), scales = _sizes(ctx, x)
    if coord == "pytorch_half_pixel" and min(oh, ow) == 1:
        _interp(ctx, x)
        return
    align, half = _LINEAR[coord] if mode == "linear" else (0, 0)
    attrs: dict[str, Any] = {"size": [oh, ow], "align_corners": align,
                             "half_pixel_centers": half}
    if mode == "nearest":
        attrs.update(_nearest(coord, rounding))
    for k, (n, o) in enumerate(zip(x[2:], (oh, ow), strict=True)):
        ratio = _ratio(n, o, scales[k] if scales else None, align, coord)
        if ratio:
            attrs["scale_h" if k == 0 else "scale_w"] = ratio
    n, c = x[:2]
    if c == 1:  # NCHW and NHWC hold the values in one order: views
        to = ("reshape", {"shape": [n, x[2], x[3], 1]})
        back = ("reshape", {"shape": [n, 1, oh, ow]})
    else:
        to, back = ("transpose", {"perm": [0, 2, 3, 1]}), ("transpose", {"perm": [0, 3, 1, 2]})
    op = "resize_nearest" if mode == "nearest" else "resize_bilinear"
    chain(ctx, [(to[0], [ctx.inp(0)], to[1]), (op, [], attrs), (back[0], [], back[1])])


def _run_time_scales(ctx: Context, x: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """The static output H and W (ONNX's shape inference's) and the positions of H's and
    W's scales in the scales operand, computed at run time."""
    out = ctx.g.hints.get(ctx.node.output[0])
    if out is None or len(out) != len(x) or tuple(out[:-2]) != tuple(x[:-2]):
        raise Unsupported("scales computed at run time, and the output's static shape "
                          f"{'unknown' if out is None else list(out)} not the input's "
                          "but in its last two dims")
    rank = len(x)
    axes = ctx.attr("axes")
    order = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
    if rank - 2 not in order or rank - 1 not in order:
        raise Unsupported(f"scales computed at run time of axes {order}, not both of the "
                          f"last two ({rank - 2}, {rank - 1})")
    return list(out[-2:]), [order.index(rank - 2), order.index(rank - 1)]


def _roi(ctx: Context, x: tuple[int, ...]) -> dict[str, float]:
    """tf_crop_and_resize's regions of interest of H and W (the roi operand, known at
    import: starts then ends, of every axis or of ``axes``) and its extrapolation_value."""
    roi = ctx.const(1)
    if roi is None or roi.dtype.kind != "f":
        raise Unsupported("tf_crop_and_resize with a roi not known at import")
    axes = ctx.attr("axes")
    order = list(range(4)) if axes is None else [int(a) % 4 for a in axes]
    v = [float(r) for r in np.ravel(roi)]
    if len(v) != 2 * len(order) or any(
            (v[k], v[k + len(order)]) != (0.0, 1.0) for k, a in enumerate(order) if a < 2):
        raise Unsupported(f"roi {v} (N and C must stay whole)")
    out = {"extrapolation_value": float(ctx.attr("extrapolation_value", 0.0))}
    for a, name in ((2, "h"), (3, "w")):
        if a in order:
            k = order.index(a)
            out[f"roi_{name}_start"], out[f"roi_{name}_end"] = v[k], v[k + len(order)]
    return out


def _interp(ctx: Context, x: tuple[int, ...]) -> None:
    """tvmdev's resize (ONNX's arithmetic) of the last two dims of ``x``."""
    if len(x) < 2:
        raise Unsupported(f"a {len(x)}-D input")
    attrs: dict[str, Any] = {
        "mode": ctx.attr("mode", "nearest"),
        "coordinate_transformation_mode": ctx.attr("coordinate_transformation_mode",
                                                   "half_pixel"),
        "nearest_mode": ctx.attr("nearest_mode", "round_prefer_floor"),
        "cubic_coeff_a": float(ctx.attr("cubic_coeff_a", -0.75)),
        "exclude_outside": int(ctx.attr("exclude_outside", 0)),
        "antialias": int(ctx.attr("antialias", 0))}
    if ctx.has(2) and ctx.const(2) is None:
        attrs["size"], attrs["scale_index"] = _run_time_scales(ctx, x)
        chain(ctx, [("resize", [ctx.inp(0), ctx.inp(2)], attrs)])
        return
    if len(x) != 4:
        raise Unsupported(f"a {len(x)}-D input with scales or sizes known at import")
    if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        attrs.update(_roi(ctx, x))
    (oh, ow), scales = _sizes(ctx, x)
    attrs["size"] = [oh, ow]
    if scales:
        attrs["scale_h"], attrs["scale_w"] = scales
    chain(ctx, [("resize", [ctx.inp(0)], attrs)])
