"""int8 fusions the plan makes (:mod:`tvmdev.plan.fuse`): one operator computing what two
of TFLM's compute in turn, bit for bit.

``conv2d_add``: a CONV_2D whose output only an ADD reads, and that ADD. Each output value
is the convolution's int8 value exactly as TFLM's ``ConvPerChannel`` writes it (its
multipliers and shifts for the intermediate tensor's quantization, ``mid_scale`` and
``mid_zero_point``, clamped to the conv's own activation, ``conv_activation``), then
TFLM's int8 ADD of that value and the residual element ``R`` (``add_params``: the
intermediate and the residual's quantization into the output's, the ADD's activation).
TFLM's ADD rescales each operand on its own and sums the two, so which of its operands
the convolution was does not change a bit. Params: ``tvmk_conv2d_add_s8_params``
(``tvmk_fused.h``): the conv's fields, then the ADD's.

``depthwise_pointwise``: a DEPTHWISE_CONV_2D whose output only a 1x1 CONV_2D (stride 1,
no padding, one group) reads, and that conv. The kernel computes one output row of the
depthwise convolution at a time into its scratch (the intermediate tensor's
quantization, ``mid_scale`` and ``mid_zero_point``, clamped to ``dw_activation``), then
the 1x1 convolution of that row, each as TFLM computes it. Params:
``tvmk_depthwise_pointwise_s8_params``: the depthwise's fields, then the 1x1's (``pw_``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..quant import Quant
from .call import S8Call, S8Op, per_tensor, refusing
from .elementwise import add_params, add_reference
from .nn import OPS as NN

# The ADD's fields of tvmk_conv2d_add_s8_params, after the conv's (add_params' names).
ADD_FIELDS = ("a_offset", "b_offset", "left_shift", "a_multiplier", "a_shift",
              "b_multiplier", "b_shift", "out_multiplier", "out_shift", "out_offset",
              "act_min", "act_max")


def mid_quant(attrs: dict[str, Any]) -> Quant:
    """The quantization of the conv's output, which the fusion removed from the graph."""
    return Quant((float(attrs["mid_scale"]),), (int(attrs["mid_zero_point"]),))


def conv_call(c: S8Call) -> S8Call:
    """The conv2d of a ``conv2d_add`` call: X, W, B into the intermediate tensor."""
    attrs = {**c.attrs, "activation": c.attrs.get("conv_activation", "NONE")}
    b = 3 if len(c.shapes) > 3 else None  # the bias, when given
    return S8Call([c.shapes[0], c.shapes[1], None if b is None else c.shapes[b]], c.out_shape,
                  attrs, [c.dtypes[0], c.dtypes[1], None if b is None else c.dtypes[b], "int8"],
                  [c.quants[0], c.quants[1], None if b is None else c.quants[b],
                   mid_quant(c.attrs)])


def _add_part(c: S8Call) -> dict[str, Any]:
    qr = c.quants[2]
    if qr is None or c.out_quant is None:
        raise ValueError("the residual and the output of conv2d_add must be quantized")
    per_tensor(qr, "the residual of conv2d_add")
    p = add_params([c.out_shape, c.out_shape], c.out_shape, c.attrs.get("activation", "NONE"),
                   mid_quant(c.attrs), qr, c.out_quant)
    return {k: p[k] for k in ADD_FIELDS}


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    if c.shapes[2] != c.out_shape:
        raise ValueError(f"the residual of conv2d_add is {list(c.shapes[2] or ())}, not the "
                         f"output's shape {list(c.out_shape)}")
    conv = NN["conv2d"].params(conv_call(c))
    conv.pop("packed_weights", None)
    conv.pop("folded_bias", None)
    return {**conv, **_add_part(c)}


def _reference(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    """TFLM's CONV_2D, then its ADD of the residual: the two references in turn."""
    p = _params(c)
    mid = NN["conv2d"].reference(conv_call(c), [x[0], x[1], x[3] if len(x) > 3 else None])
    r = x[2]
    assert r is not None
    out = add_reference(np.asarray(mid), np.asarray(r).reshape(c.out_shape), p)
    return out.reshape(c.out_shape)


# The 1x1 convolution of a depthwise_pointwise, as conv2d's attributes.
POINTWISE = {"layout": "NHWC", "strides": (1, 1), "pads": (0, 0, 0, 0),
             "dilations": (1, 1), "group": 1, "kernel_shape": (1, 1), "auto_pad": "NOTSET"}
# The 1x1's fields of tvmk_depthwise_pointwise_s8_params, after the depthwise's.
PW_FIELDS = ("M", "input_offset", "output_offset", "activation_min", "activation_max",
             "output_multiplier", "output_shift")


def dw_call(c: S8Call) -> S8Call:
    """The depthwise_conv2d of a ``depthwise_pointwise`` call: X, DW, DB into the
    intermediate tensor ([N, OH, OW, C * mult])."""
    attrs = {**c.attrs, "activation": c.attrs.get("dw_activation", "NONE")}
    mid = (*c.out_shape[:3], (c.shapes[1] or (0,))[-1])
    return S8Call(c.shapes[:3], mid, attrs, [*c.dtypes[:3], "int8"],
                  [*c.quants[:3], mid_quant(c.attrs)])


def pw_call(c: S8Call) -> S8Call:
    """The 1x1 conv2d of a ``depthwise_pointwise`` call: the intermediate, PW, PB."""
    mid = dw_call(c).out_shape
    attrs = {**POINTWISE, "activation": c.attrs.get("activation", "NONE")}
    return S8Call([mid, *c.shapes[3:5]], c.out_shape, attrs, ["int8", *c.dtypes[3:]],
                  [mid_quant(c.attrs), *c.quants[3:]])


@refusing
def _dwpw_params(c: S8Call) -> dict[str, Any]:
    pw_shape = c.shapes[3] or ()
    if len(pw_shape) != 4 or pw_shape[1:3] != (1, 1):
        raise ValueError(f"the pointwise weights of depthwise_pointwise are "
                         f"{list(pw_shape)}, not [M, 1, 1, C]")
    dw = NN["depthwise_conv2d"].params(dw_call(c))
    pw = NN["conv2d"].params(pw_call(c))
    return {**dw, **{f"pw_{k}": pw[k] for k in PW_FIELDS}}


def _dwpw_reference(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    """TFLM's DEPTHWISE_CONV_2D, then its 1x1 CONV_2D: the two references in turn."""
    _dwpw_params(c)
    mid = NN["depthwise_conv2d"].reference(dw_call(c), x[:3])
    return NN["conv2d"].reference(pw_call(c), [mid, *x[3:5]]).reshape(c.out_shape)


OPS = {
    "conv2d_add": S8Op("tvmk_conv2d_add_s8_params", _params, _reference,
                       ("int8", "int8", "int8", "int32", "int8"), scratch=True),
    "depthwise_pointwise": S8Op("tvmk_depthwise_pointwise_s8_params", _dwpw_params,
                                _dwpw_reference,
                                ("int8", "int8", "int32", "int8", "int32", "int8"),
                                scratch=True),
}
