"""The operators the plan's fusions make (:mod:`tvmdev.plan.fuse`): int8 only, their
form in :mod:`tvmdev.model.s8.fused`. A fused operator is an operator like the others
(a window over X, as a convolution's), so later planners treat it as one."""

from __future__ import annotations

from functools import partial
from typing import Any

from .opdef import Attr, OpDef
from .shapes import ACTIVATIONS, Shape, ShapeError
from .windowed import conv_infer, resolve_window

_ACT = Attr("str", "NONE", choices=ACTIVATIONS)


def _int8_only(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
               ) -> dict[str, Any]:
    raise ShapeError("conv2d_add is int8 only (the plan fuses an int8 conv2d and the add "
                     "that reads it)")


FUSED_OPS = [
    OpDef("conv2d_add", ("X", "W", "R", "B"), frozenset({"B"}), ("Y",),
          {"strides": Attr("ints", ()), "pads": Attr("ints", ()), "dilations": Attr("ints", ()),
           "auto_pad": Attr("str", "NOTSET", choices=("NOTSET",)),
           "group": Attr("int", 1), "kernel_shape": Attr("ints", None),
           "layout": Attr("str", "NHWC", choices=("NHWC",)),
           "conv_activation": _ACT, "activation": _ACT,
           "mid_scale": Attr("float", None), "mid_zero_point": Attr("int", None)},
          "tvmk_conv2d_add_s8_params", lambda s, a: conv_infer(s[:2], a), _int8_only,
          scratch=True, resolve=lambda s, a: resolve_window("conv2d", s[:2], a),
          doc="int8 only: add(conv2d(X, W, B), R), the conv's output quantized as "
              "mid_scale, mid_zero_point and clamped to conv_activation (the plan's fusion)"),
]
