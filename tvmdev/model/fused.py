"""The operators the plan's fusions make (:mod:`tvmdev.plan.fuse`): int8 only, their
form in :mod:`tvmdev.model.s8.fused`. A fused operator is an operator like the others
(a window over X, as a convolution's), so later planners treat it as one."""

from __future__ import annotations

from typing import Any

from .opdef import Attr, OpDef
from .shapes import ACTIVATIONS, Shape, ShapeError
from .windowed import conv_infer, depthwise_infer, resolve_window

_ACT = Attr("str", "NONE", choices=ACTIVATIONS)


def _int8_only(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
               ) -> dict[str, Any]:
    raise ShapeError("the fused operators are int8 only (the plan fuses int8 operators)")


def _dwpw_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The depthwise convolution's output shape with the 1x1's channels."""
    pw = shapes[3]
    if pw is None or len(pw) != 4:
        raise ShapeError("PW must be 4-D [M, 1, 1, C]")
    return (*depthwise_infer(shapes[:2], attrs)[:3], pw[0])


_WINDOW = {"strides": Attr("ints", ()), "pads": Attr("ints", ()), "dilations": Attr("ints", ()),
           "auto_pad": Attr("str", "NOTSET", choices=("NOTSET",))}
_MID = {"mid_scale": Attr("float", None), "mid_zero_point": Attr("int", None)}


FUSED_OPS = [
    OpDef("conv2d_add", ("X", "W", "R", "B"), frozenset({"B"}), ("Y",),
          {**_WINDOW, "group": Attr("int", 1), "kernel_shape": Attr("ints", None),
           "layout": Attr("str", "NHWC", choices=("NHWC",)),
           "conv_activation": _ACT, "activation": _ACT, **_MID},
          "tvmk_conv2d_add_s8_params", lambda s, a: conv_infer(s[:2], a), _int8_only,
          scratch=True, resolve=lambda s, a: resolve_window("conv2d", s[:2], a),
          doc="int8 only: add(conv2d(X, W, B), R), the conv's output quantized as "
              "mid_scale, mid_zero_point and clamped to conv_activation (the plan's fusion)"),
    OpDef("depthwise_pointwise", ("X", "DW", "DB", "PW", "PB"), frozenset(), ("Y",),
          {**_WINDOW, "depth_multiplier": Attr("int", 1), "dw_activation": _ACT,
           "activation": _ACT, **_MID},
          "tvmk_depthwise_pointwise_s8_params", _dwpw_infer, _int8_only, scratch=True,
          resolve=lambda s, a: resolve_window("depthwise_conv2d", s[:2], a),
          doc="int8 only: conv2d(depthwise_conv2d(X, DW, DB), PW, PB), PW 1x1, the "
              "depthwise's output quantized as mid_scale, mid_zero_point and clamped to "
              "dw_activation, one row at a time in scratch (the plan's fusion)"),
]
