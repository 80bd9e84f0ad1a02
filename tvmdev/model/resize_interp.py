"""resize: ONNX's Resize (float32) of a tensor's last two dims (H and W of NCHW) to
``size`` [OH, OW], with ONNX's modes (nearest, linear, cubic), coordinate transformations,
nearest modes, ``cubic_coeff_a``, ``exclude_outside`` and ``antialias``, as ONNX's
operator definition and ONNX Runtime compute them. tvmdev maps a Resize onto TFLite's
resizes where their arithmetic is the same (tvmdev/frontends/onnx_resize.py); this op
takes the rest, and a Resize whose scales are computed at run time.

Each output index v of an axis of input length n, output length o and scale s (ONNX's:
output over input; from the ``scales`` operand at run time when given, else ``scale_h``,
``scale_w``, else o / n) is at the input position x:

- half_pixel (v + 0.5) / s - 0.5; pytorch_half_pixel the same, 0 when o is 1;
  tf_half_pixel_for_nn (v + 0.5) / s; asymmetric v / s;
- align_corners v * (n - 1) / (o - 1), 0 when o is 1 (ONNX Runtime's: the output's
  length, not s * n as onnx's reference takes it; the two differ when s * n is not whole);
- half_pixel_symmetric: c (1 - o / (s n)) + (v + 0.5) / s - 0.5 with c = n / 2;
- tf_crop_and_resize, the axis's region of interest [a, b] (``roi_h_start``,
  ``roi_h_end``, ``roi_w_start``, ``roi_w_end``: fractions of n - 1):
  a (n - 1) + v (b - a) (n - 1) / (o - 1), (a + b) (n - 1) / 2 when o is 1; an output
  whose position is outside [0, n - 1] on either axis is ``extrapolation_value``.

The taps are the ``k`` input indices around x (below it first: b = ceil(x) - 1, r = x - b
in (0, 1]) from b + 1 - k/2 to b + k/2, read clamped to [0, n - 1] (edge padding): nearest
takes b or b + 1 (round_prefer_floor: b when r <= 0.5; round_prefer_ceil: b when r < 0.5;
floor: b; ceil, or r = 1: b + 1); linear weighs tap t by max(0, 1 - |t - x|), cubic by
Keys' kernel with a = ``cubic_coeff_a`` at |t - x|. With antialias (linear and cubic,
when s < 1) the kernel is stretched by 1 / s (its argument is (t - x) s, k grows to
cover it) and the weights are divided by their sum; with exclude_outside the weights of
taps outside [0, n - 1] are 0 and the rest divided by their sum. The two axes are
separable: an output value is the sum over both axes' taps of the weights' product times
the input value.

With the ``scales`` operand (ONNX's, read at run time; ``scale_index`` the positions of
H's and W's in it), the output shape stays the static ``size``: every other scale must
be 1, and floor(s n) (in float32, as ONNX Runtime computes it) must be the output's
length, else the run fails.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TvmdevError
from .opdef import Attr, OpDef
from .shapes import Shape, ShapeError, numel

MODES = ("nearest", "linear", "cubic")
COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn", "half_pixel_symmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
F32 = np.float32


def interp_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of resize: the input's with its last two dims ``size``."""
    x = shapes[0]
    assert x is not None
    if len(x) < 2:
        raise ShapeError(f"resize: X must have at least 2 dims, got {list(x)}")
    oh, ow = attrs["size"]
    if oh < 1 or ow < 1:
        raise ShapeError(f"resize: size {[oh, ow]} must be positive")
    scales = shapes[1] if len(shapes) > 1 else None
    if scales is not None:
        n = numel(scales)
        if len(scales) != 1 or not all(0 <= i < n for i in attrs["scale_index"]):
            raise ShapeError(f"resize: scales {list(scales)} must be a vector holding "
                             f"scale_index {list(attrs['scale_index'])}")
    return (*x[:-2], oh, ow)


def interp_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                  ) -> dict[str, Any]:
    """The kernel params of resize."""
    x = shapes[0]
    assert x is not None
    scales = shapes[1] if len(shapes) > 1 else None
    ih, iw = attrs["scale_index"]
    return {"outer": numel(x[:-2]), "H": x[-2], "W": x[-1], "OH": out[-2], "OW": out[-1],
            "scale_h": _given(attrs["scale_h"], x[-2], out[-2]),
            "scale_w": _given(attrs["scale_w"], x[-1], out[-1]),
            "mode": MODES.index(attrs["mode"]),
            "coord": COORDS.index(attrs["coordinate_transformation_mode"]),
            "nearest_mode": NEAREST_MODES.index(attrs["nearest_mode"]),
            "cubic_a": float(attrs["cubic_coeff_a"]),
            "exclude_outside": int(attrs["exclude_outside"]),
            "antialias": int(attrs["antialias"]),
            "scales_count": 0 if scales is None else numel(scales),
            "index_h": ih, "index_w": iw,
            **{k: float(attrs[k]) for k in ("roi_h_start", "roi_h_end", "roi_w_start",
                                            "roi_w_end", "extrapolation_value")}}


def _given(scale: float, n: int, o: int) -> float:
    """An axis's scale: the one given, else o / n (in float32, as the kernel takes it)."""
    return float(F32(scale)) if scale else float(F32(o) / F32(n))


def position(v: int, n: int, o: int, s: float, coord: str,
             roi: tuple[float, float] = (0.0, 1.0)) -> float:
    """The input position of output index ``v`` (float32 arithmetic, as the kernel)."""
    fv, fs, fn = F32(v), F32(s), F32(n)
    if coord == "tf_crop_and_resize":
        a, b, span = F32(roi[0]), F32(roi[1]), F32(n - 1)
        if o == 1:
            return float(F32(0.5) * (a + b) * span)
        return float(a * span + fv * (b - a) * span / F32(o - 1))
    if coord == "align_corners":
        return 0.0 if o == 1 else float(fv * F32(n - 1) / F32(o - 1))
    if coord == "asymmetric":
        return float(fv / fs)
    if coord == "tf_half_pixel_for_nn":
        return float((fv + F32(0.5)) / fs)
    if coord == "pytorch_half_pixel" and o == 1:
        return 0.0
    x = (fv + F32(0.5)) / fs - F32(0.5)
    if coord == "half_pixel_symmetric":
        x = fn / F32(2) * (F32(1) - F32(o) / (fs * fn)) + x
    return float(x)


def _cubic(d: float, a: float) -> float:
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    if d < 2:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return 0.0


def taps(x: float, n: int, s: float, attrs: dict[str, Any]) -> list[tuple[int, float]]:
    """The input indices (clamped to [0, n - 1]) and weights of input position ``x``."""
    base = math.ceil(x) - 1
    r = x - base
    mode = attrs["mode"]
    if mode == "nearest":
        up = {"round_prefer_floor": r > 0.5, "round_prefer_ceil": r >= 0.5,
              "floor": r == 1, "ceil": True}[attrs["nearest_mode"]]
        return [(min(max(base + int(up), 0), n - 1), 1.0)]
    reach = 1 if mode == "linear" else 2  # the kernel's half width
    stretch = min(s, 1.0) if attrs["antialias"] else 1.0
    start = math.floor(-reach / stretch) + 1
    found = []
    for i in range(start, 1 - start + 1):
        d = (i - r) * stretch
        w = max(0.0, 1 - abs(d)) if mode == "linear" else _cubic(d, attrs["cubic_coeff_a"])
        if attrs["exclude_outside"] and not 0 <= base + i < n:
            w = 0.0
        found.append((min(max(base + i, 0), n - 1), w))
    if attrs["antialias"] or attrs["exclude_outside"]:
        total = sum(w for _, w in found)
        found = [(t, w / total) for t, w in found]
    return found


def _axis_matrix(n: int, o: int, s: float, attrs: dict[str, Any], axis: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """[o, n]: each output index's weights over the input indices; [o]: whether its
    position is inside the input (tf_crop_and_resize extrapolates outside)."""
    m = np.zeros((o, n))
    inside = np.ones(o, bool)
    coord = attrs["coordinate_transformation_mode"]
    for v in range(o):
        x = position(v, n, o, s, coord,
                     (attrs[f"roi_{axis}_start"], attrs[f"roi_{axis}_end"]))
        inside[v] = coord != "tf_crop_and_resize" or 0 <= x <= n - 1
        for t, w in taps(x, n, s, attrs):
            m[v, t] += w
    return m, inside


def _run_scales(scales: np.ndarray, x: Shape, attrs: dict[str, Any]) -> tuple[float, float]:
    """H's and W's scales from the scales operand, checked against the static output."""
    ih, iw = attrs["scale_index"]
    v = np.asarray(scales, F32).ravel()
    others = [float(s) for k, s in enumerate(v) if k not in (ih, iw)]
    got = [int(F32(v[i]) * F32(n)) for i, n in ((ih, x[-2]), (iw, x[-1]))]
    if any(s != 1.0 for s in others) or got != list(attrs["size"]):
        raise TvmdevError(f"resize: the scales {v.tolist()} computed at run time give "
                          f"[{', '.join(map(str, got))}] in H and W (other scales 1), not "
                          f"the output's static {list(attrs['size'])}: the run fails",
                          hint="the output's shape is fixed when the model is compiled (the "
                               "model's declared one): feed scales that give it")
    return float(v[ih]), float(v[iw])


def interp_reference(args: list[np.ndarray | None], attrs: dict[str, Any]) -> np.ndarray:
    """resize of ``args[0]`` (its last two dims), in float64 from float32 positions."""
    x = args[0]
    assert x is not None
    n_h, n_w = x.shape[-2:]
    o_h, o_w = attrs["size"]
    scales = args[1] if len(args) > 1 else None
    if scales is not None:
        s_h, s_w = _run_scales(scales, x.shape, attrs)
    else:
        s_h, s_w = _given(attrs["scale_h"], n_h, o_h), _given(attrs["scale_w"], n_w, o_w)
    mh, in_h = _axis_matrix(n_h, o_h, s_h, attrs, "h")
    mw, in_w = _axis_matrix(n_w, o_w, s_w, attrs, "w")
    y = np.einsum("yh,...hw,xw->...yx", mh, np.asarray(x, np.float64), mw)
    return np.asarray(np.where(in_h[:, None] & in_w[None, :], y,
                               F32(attrs["extrapolation_value"])))


RESIZE_OPDEF = OpDef(
    "resize", ("X", "scales"), frozenset({"scales"}), ("Y",),
    {"size": Attr("ints", None, length=2),
     "mode": Attr("str", "nearest", choices=MODES),
     "coordinate_transformation_mode": Attr("str", "half_pixel", choices=COORDS),
     "nearest_mode": Attr("str", "round_prefer_floor", choices=NEAREST_MODES),
     "cubic_coeff_a": Attr("float", -0.75), "exclude_outside": Attr("bool", 0),
     "antialias": Attr("bool", 0), "scale_h": Attr("float", 0.0),
     "scale_w": Attr("float", 0.0), "scale_index": Attr("ints", [2, 3], length=2),
     "roi_h_start": Attr("float", 0.0), "roi_h_end": Attr("float", 1.0),
     "roi_w_start": Attr("float", 0.0), "roi_w_end": Attr("float", 1.0),
     "extrapolation_value": Attr("float", 0.0)},
    "tvmk_resize_params", interp_infer, interp_params,
    doc="ONNX's Resize of the last two dims to size [OH, OW]: nearest, linear, cubic, "
        "antialias; its scales given, or read at run time (scales)")
