"""int8 fully_connected, conv2d and depthwise_conv2d, as TFLM's reference integer kernels
compute them (``reference_integer_ops::FullyConnected``, ``ConvPerChannel``,
``DepthwiseConvPerChannel``), with their params as TFLM's Prepare derives them.

Accumulation is int32 of ``(w + weights_offset) * (x + input_offset)`` plus the int32
bias; the sum is requantized by ``MultiplyByQuantizedMultiplier`` with the multiplier and
shift of ``input_scale * weight_scale / output_scale`` (in double, then
``QuantizeMultiplier``), per output channel for per-channel weights; then the output zero
point is added and the result clamped to the fused activation's range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fixedpoint import INT32_MAX, INT32_MIN, multiply_by_quantized_multiplier
from ..fixedpoint import quantize_multiplier as qm
from ..quant import Quant
from ..regions import fc_params
from ..shapes import ShapeError
from ..taps import taps
from ..windowed import conv_params, depthwise_params
from .call import CArray, S8Call, S8Op, activation_range, per_tensor


def requant(in_scale: float, w_scale: float, out_scale: float) -> tuple[int, int]:
    """The multiplier and shift of ``in_scale * w_scale / out_scale`` (TFLite's
    ``GetQuantizedConvolutionMultipler`` then ``QuantizeMultiplier``)."""
    try:
        return qm(float(in_scale) * float(w_scale) / float(out_scale))
    except ValueError as exc:
        raise ShapeError(f"the requantization scale cannot be represented: {exc}") from None


def _io(c: S8Call, op: str) -> tuple[float, int, float, int]:
    s_in, zp_in = per_tensor(c.quants[0], f"the input of {op}")
    s_out, zp_out = per_tensor(c.out_quant, f"the output of {op}")
    return s_in, zp_in, s_out, zp_out


def _fc_params(c: S8Call) -> dict[str, Any]:
    """Weights per tensor (TFLM's FullyConnected: a multiplier and shift, any weights zero
    point) or per output channel (FullyConnectedPerChannel: arrays, zero points 0)."""
    s_in, zp_in, s_out, zp_out = _io(c, "fully_connected")
    dims = fc_params(c.shapes, c.out_shape, c.attrs)
    qw = c.quants[1]
    mults: CArray | None = None
    shifts: CArray | None = None
    if qw is not None and qw.per_channel:
        mults, shifts = channel_requant(c, "fully_connected", dims["out_size"])
        mult, shift, zp_w = 0, 0, 0
    else:
        s_w, zp_w = per_tensor(qw, "the weights of fully_connected")
        mult, shift = requant(s_in, s_w, s_out)
    lo, hi = activation_range(c.attrs.get("activation", "NONE"), s_out, zp_out)
    return {"batch": dims["batch"], "in_size": dims["in_size"], "out_size": dims["out_size"],
            "input_offset": -zp_in, "weights_offset": -zp_w, "output_offset": zp_out,
            "output_multiplier": mult, "output_shift": shift,
            "activation_min": lo, "activation_max": hi,
            "channel_multiplier": mults, "channel_shift": shifts,  # None: NULL
            # the weights' row sums, where a board library precomputes them (cmsis_nn)
            "kernel_sums": None}


def _requantize(acc: np.ndarray, mult: Any, shift: Any, p: dict[str, Any]) -> np.ndarray:
    """The int32 accumulators (int64 here, checked to fit) requantized to int8."""
    if np.any((acc < INT32_MIN) | (acc > INT32_MAX)):
        raise OverflowError("an int8 accumulator overflows int32")
    y = multiply_by_quantized_multiplier(acc, mult, shift) + p["output_offset"]
    return np.asarray(np.clip(y, p["activation_min"], p["activation_max"]), np.int8)


def _fc_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _fc_params(c)
    xv, w, b = x[0], x[1], x[2] if len(x) > 2 else None
    assert xv is not None and w is not None
    rows = np.asarray(xv, np.int64).reshape(p["batch"], p["in_size"]) + p["input_offset"]
    acc = rows @ (np.asarray(w, np.int64) + p["weights_offset"]).T
    if b is not None:
        acc = acc + np.asarray(b, np.int64)
    mult, shift = p["output_multiplier"], p["output_shift"]
    if isinstance(p["channel_multiplier"], CArray):
        mult = np.asarray(p["channel_multiplier"].values, np.int64)
        shift = np.asarray(p["channel_shift"].values, np.int64)
    return _requantize(acc, mult, shift, p).reshape(c.out_shape)


def channel_requant(c: S8Call, op: str, channels: int) -> tuple[CArray, CArray]:
    """Per output channel multipliers and shifts (a per-tensor weight scale repeated)."""
    s_in, _, s_out, _ = _io(c, op)
    qw: Quant | None = c.quants[1]
    if qw is None:
        raise ShapeError(f"the weights of {op} are int8 but have no quant")
    if qw.per_channel and len(qw.scale) != channels:
        raise ShapeError(f"the weights of {op} have {len(qw.scale)} scales for {channels} "
                         "output channels")
    if any(z != 0 for z in qw.zero_point):
        raise ShapeError(f"the weights of {op} must be symmetric (zero point 0), as TFLite's "
                         "per-channel kernels take them")
    scales = qw.scale if qw.per_channel else qw.scale * channels
    pairs = [requant(s_in, s, s_out) for s in scales]
    return (CArray("int32_t", tuple(m for m, _ in pairs)),
            CArray("int32_t", tuple(s for _, s in pairs)))


_WINDOW = ("N", "C", "H", "W", "KH", "KW", "OH", "OW", "stride_h", "stride_w", "pad_top",
           "pad_left", "dil_h", "dil_w")


def window_params(c: S8Call, op: str, dims: dict[str, Any], extra: tuple[str, ...],
                   channels: int) -> dict[str, Any]:
    """The params of an int8 conv: its window (NHWC), offsets, activation range and
    per-channel multipliers and shifts."""
    _, zp_in, s_out, zp_out = _io(c, op)
    mult, shift = channel_requant(c, op, channels)
    lo, hi = activation_range(c.attrs.get("activation", "NONE"), s_out, zp_out)
    return {**{k: dims[k] for k in _WINDOW + extra}, "input_offset": -zp_in,
            "output_offset": zp_out, "activation_min": lo, "activation_max": hi,
            "output_multiplier": mult, "output_shift": shift,
            # conv2d's struct: where tvmdev's own Cortex-M kernel lays them out
            # (tvmdev/plan/hooks/tvmdev_cm.py); None: NULL
            **({"packed_weights": None, "folded_bias": None} if "group" in extra else {})}


def _conv_params(c: S8Call) -> dict[str, Any]:
    if c.attrs.get("layout") != "NHWC":
        raise ShapeError("int8 conv2d is NHWC (TFLite's layout) only")
    dims = conv_params(c.shapes, c.out_shape, c.attrs)
    return window_params(c, "conv2d", dims, ("M", "group"), dims["M"])


def _depthwise_params(c: S8Call) -> dict[str, Any]:
    dims = depthwise_params(c.shapes, c.out_shape, c.attrs)
    return window_params(c, "depthwise_conv2d", dims, ("mult",), dims["C"] * dims["mult"])


def patches(p: dict[str, Any], x: np.ndarray
             ) -> list[tuple[int, int, tuple[slice, slice], np.ndarray]]:
    """For each filter position (ky, kx) that meets the input: the output positions
    (rows, columns) where it does and the input values it meets there (N x rows x
    columns x C, input_offset added). TFLM skips the padding, and so does this: a window
    far larger than the input costs no padded copy of it."""
    v = np.asarray(x, np.int64).reshape(p["N"], p["H"], p["W"], p["C"]) + p["input_offset"]
    rows = taps(p["H"], p["KH"], p["stride_h"], p["dil_h"], p["pad_top"], p["OH"])
    cols = taps(p["W"], p["KW"], p["stride_w"], p["dil_w"], p["pad_left"], p["OW"])
    return [(i.tap, j.tap, (i.outs, j.outs), v[:, i.ins, j.ins, :]) for i in rows for j in cols]


def _conv_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _conv_params(c)
    xv, w, b = x[0], x[1], x[2] if len(x) > 2 else None
    assert xv is not None and w is not None
    g, m = p["group"], p["M"]
    mg, cg = m // g, p["C"] // g
    wv = np.asarray(w, np.int64).reshape(m, p["KH"], p["KW"], cg)
    acc = np.zeros((p["N"], p["OH"], p["OW"], m), np.int64)
    for ky, kx, (oy, ox), patch in patches(p, xv):
        for k in range(g):
            acc[:, oy, ox, k * mg:(k + 1) * mg] += (patch[..., k * cg:(k + 1) * cg]
                                                    @ wv[k * mg:(k + 1) * mg, ky, kx, :].T)
    return finish(c, p, acc, b)


def _depthwise_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _depthwise_params(c)
    xv, w, b = x[0], x[1], x[2] if len(x) > 2 else None
    assert xv is not None and w is not None
    wv = np.asarray(w, np.int64)[0]
    acc = np.zeros((p["N"], p["OH"], p["OW"], p["C"] * p["mult"]), np.int64)
    for ky, kx, (oy, ox), patch in patches(p, xv):
        acc[:, oy, ox, :] += np.repeat(patch, p["mult"], axis=3) * wv[ky, kx, :]
    return finish(c, p, acc, b)


def finish(c: S8Call, p: dict[str, Any], acc: np.ndarray, b: np.ndarray | None
            ) -> np.ndarray:
    """Bias, per-channel requantization, offset and clamp; in the output's shape."""
    if b is not None:
        acc = acc + np.asarray(b, np.int64)
    mult = np.asarray(p["output_multiplier"].values, np.int64)
    shift = np.asarray(p["output_shift"].values, np.int64)
    return _requantize(acc, mult, shift, p).reshape(c.out_shape)


OPS = {
    "conv2d": S8Op("tvmk_conv2d_s8_params", _conv_params, _conv_ref,
                   ("int8", "int8", "int32", "int8"), scratch=True),
    "depthwise_conv2d": S8Op("tvmk_depthwise_conv2d_s8_params", _depthwise_params,
                             _depthwise_ref, ("int8", "int8", "int32", "int8"), scratch=True),
    "fully_connected": S8Op("tvmk_fully_connected_s8_params", _fc_params, _fc_ref,
                            ("int8", "int8", "int32", "int8"), scratch=True),
}
