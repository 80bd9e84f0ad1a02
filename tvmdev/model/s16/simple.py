"""int16 PAD, LEAKY_RELU, CONCATENATION, STRIDED_SLICE and RESIZE_NEAREST_NEIGHBOR, as
TFLM computes them.

PAD copies the input unchanged and fills with 0 (PAD) or PADV2's int16 constant: TFLM's
int16 PAD fills a raw 0 whatever the output's zero point, so tvmdev takes int16 PAD with
zero point 0 only (where 0 is the real 0). LEAKY_RELU is the int8 form's arithmetic
(``QuantizeLeakyRelu``) clamped to int16. Params are the int8 forms' structs
(``tvmk_pad_s8_params``, ``tvmk_leaky_relu_s8_params``). STRIDED_SLICE copies the
values as TFLM's int16 copy does (the output's quantization is not read, as for int8),
by strided_slice's byte walk: the raw int16 kernel serves both. RESIZE_NEAREST_NEIGHBOR
copies the input pixel TFLM picks, as the int8 form (``tvmk_resize_nearest_params``; the
output's quantization is not read).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..regions import concat_params, pad_params
from ..resize import resize_params, resize_reference
from ..s8 import concat as s8concat
from ..s8 import piecewise
from ..s8.call import S8Call, S8Op, per_tensor, quant_of, refusing
from ..shapes import ShapeError, numel
from ..slicing import strided_slice_params, strided_slice_reference

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


@refusing
def _pad_params(c: S8Call) -> dict[str, Any]:
    scale, zp = per_tensor(c.out_quant, "the output of pad")
    if zp != 0:
        raise ShapeError(f"int16 pad: the output's zero point is {zp}; TFLM pads int16 with "
                         "0 whatever it is, so tvmdev takes zero point 0 only")
    qin = quant_of(c, 0, "the input")
    if per_tensor(qin, "the input of pad") != (scale, zp):
        raise ShapeError("int16 pad: the input and output must share one quantization "
                         "(TFLM copies the values)")
    value = float(c.attrs.get("value", 0.0))
    ratio = float(np.float32(value) / np.float32(scale))
    fill = int(np.sign(ratio) * np.floor(abs(ratio) + 0.5))
    if not I16_MIN <= fill <= I16_MAX:
        raise ValueError(f"the int16 pad value {fill} is out of range")
    base = pad_params(c.shapes, c.out_shape, {"pads": tuple(c.attrs["pads"]), "value": 0.0})
    return {**base, "value": fill}


def _pad_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _pad_params(c)
    widths = [(p["begin"][d], p["out_shape"][d] - p["in_shape"][d] - p["begin"][d])
              for d in range(p["ndim"])]
    return np.pad(np.asarray(x[0]), widths, constant_values=p["value"]).astype(np.int16)


@refusing
def _leaky_params(c: S8Call) -> dict[str, Any]:
    qin, qout = quant_of(c, 0, "the input"), quant_of(c, -1, "the output")
    p = piecewise.leaky_relu_params(numel(c.out_shape), c.attrs["alpha"], qin, qout)
    (si, _), (so, _) = per_tensor(qin, "the input"), per_tensor(qout, "the output")
    # TFLM's Python interpreter (the reference) derives both multipliers in double, not
    # from the float32 quotients leaky_relu_common.cc spells: the int16 SEANet models tell.
    alpha = float(np.float32(c.attrs["alpha"]))
    p["identity_multiplier"], p["identity_shift"] = quantize_multiplier(si / so)
    p["alpha_multiplier"], p["alpha_shift"] = quantize_multiplier(si * alpha / so)
    if p["alpha_multiplier"] == I16_MIN << 16:
        raise ValueError(f"alpha {alpha} gives the multiplier -2^31, whose magnitude TFLM "
                         "cannot take")
    return p


@refusing
def _leaky_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    p = _leaky_params(c)
    v = np.asarray(x[0], np.int64) - p["input_zero_point"]
    up = multiply_by_quantized_multiplier(np.where(v >= 0, v, 0), p["identity_multiplier"],
                                          p["identity_shift"])
    down = multiply_by_quantized_multiplier(np.where(v < 0, v, 0), abs(p["alpha_multiplier"]),
                                            p["alpha_shift"])
    down = -down if p["alpha_multiplier"] < 0 else down
    out = p["output_zero_point"] + np.where(v >= 0, up, down)
    return np.asarray(np.clip(out, I16_MIN, I16_MAX), np.int16).reshape(c.out_shape)


@refusing
def _concat_params(c: S8Call) -> dict[str, Any]:
    """TFLM's int16 CONCATENATION copies the values, requiring zero points 0 only; tvmdev
    requires the inputs quantized as the output too (it would not ignore the scales)."""
    want = per_tensor(c.out_quant, "the output of concat")
    if want[1] != 0:
        raise ShapeError("int16 concat: TFLM requires zero points 0")
    for i in range(len(c.shapes)):
        got = per_tensor(quant_of(c, i, f"input {i}"), f"input {i} of concat")
        if got != want:
            raise ShapeError(f"input {i} of an int16 concat is quantized as {got}, the output "
                             f"as {want}: TFLM copies the values, ignoring the scales")
    if len(c.shapes) > s8concat.MAX_INPUTS:
        raise ShapeError(f"TFLM concatenates at most {s8concat.MAX_INPUTS} tensors")
    return concat_params(c.shapes, c.out_shape, {"axis": c.attrs["axis"]})


def _concat_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    _concat_params(c)
    return np.concatenate([np.asarray(v, np.int16) for v in x if v is not None],
                          axis=c.attrs["axis"])


def _slice_params(c: S8Call) -> dict[str, Any]:
    return strided_slice_params(c.shapes, c.out_shape, c.attrs)


def _slice_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return strided_slice_reference(np.asarray(v), c.attrs).astype(np.int16)


def _resize_params(c: S8Call) -> dict[str, Any]:
    return resize_params(c.shapes, c.out_shape, c.attrs)


def _resize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return resize_reference(np.asarray(v), c.attrs).astype(np.int16)


OPS = {
    "resize_nearest": S8Op("tvmk_resize_nearest_params", _resize_params, _resize_ref,
                           ("int16", "int16")),
    "strided_slice": S8Op("tvmk_strided_slice_params", _slice_params, _slice_ref,
                          ("int16", "int16")),
    "concat": S8Op("tvmk_concat_s8_params", _concat_params, _concat_ref, ("int16", "int16")),
    "pad": S8Op("tvmk_pad_s8_params", _pad_params, _pad_ref, ("int16", "int16")),
    "leaky_relu": S8Op("tvmk_leaky_relu_s8_params", _leaky_params, _leaky_ref,
                       ("int16", "int16")),
}
