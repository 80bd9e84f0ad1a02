"""What tvmdev decides at generation time for its own Cortex-M kernels
(runtime/kernels/tvmdev_cm, ``tvmk_cm.h``): which operators they take, the scratch each
needs, and the constants laid out for them. What follows is the ``dsp`` code path (SMLAD);
an ``mve`` core's (Helium, the Cortex-M55) questions go to :mod:`.tvmdev_cm_mve`.

depthwise_conv2d (int8): taken with a channel multiplier of 1, no dilation, a square 3x3,
5x5 or 7x7 filter, one stride (1 or 2) in both directions, a constant filter and bias,
and an int16 plane of at most :data:`PLANE_MAX` bytes; declined otherwise (CMSIS-NN, or
the portable kernel, takes it). Its scratch holds the plane and one channel's filter
widened to int16 pairs; the kernel widens the int8 filter (and folds the bias with the
input offset) per channel, so the filter costs no flash beyond TFLM's.

conv2d (int8): taken with no groups, no dilation, more than one and at most
:data:`TAPS_MAX` taps per output channel (KH x KW x C: a first convolution), a constant
filter and bias. Laid out (a few hundred bytes of flash):

- ``packed_weights``: per output channel, its taps in the filter's order as int16 pairs
  (the even tap in the low half, the odd one in the high half, a zero after an odd
  count), what SMLAD multiplies a window's pairs by;
- ``folded_bias``: per output channel, the bias plus input_offset times the sum of its
  taps, so the kernel multiplies raw inputs (a window's padding holds the zero point):
  sum(w * x) + bias + input_offset * sum(w) is TFLM's sum(w * (x + input_offset)) + bias
  over the taps inside the input, in int32 arithmetic (both wrap alike).

Its scratch holds one output row's windows, widened to int16.

conv2d with a constant 1x1 filter: :mod:`.tvmdev_cm_1x1` decides, lays out and sizes it
(its scratch: one pixel widened). conv2d with more than :data:`TAPS_MAX` taps:
:mod:`.tvmdev_cm_conv` (a 1x1 over each output pixel's window). fully_connected (both
code paths): :mod:`.tvmdev_cm_fc`.

Requantization (both) is TFLM's ``MultiplyByQuantizedMultiplier`` in fewer instructions
(``tvmk_cm_requantize``): its saturating rounding doubling high multiply of a = acc * 2^left
and the multiplier m is floor((a * m + 2^30) / 2^31), which is SMMULR of 2a and m as long
as 2a fits int32. :func:`accumulator_bound` proves that per layer from the filter, the
bias and the input's zero point (TFLM's accumulator is at most |bias| + sum|w| * the
largest |x - zero point|), or the operator is declined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from . import tvmdev_cm_1x1, tvmdev_cm_conv, tvmdev_cm_fc, tvmdev_cm_mve, tvmdev_cm_mvedw

SIZES = (3, 5, 7)
STRIDES = (1, 2)
PLANE_MAX = 32 * 1024  # bytes of one channel's int16 plane in the workspace
TAPS_MAX = 32  # conv2d: taps per output channel (KH x KW x C)


def plane_bytes(p: dict[str, Any]) -> int:
    """depthwise_conv2d's scratch: the int16 plane of one channel (every row and column a
    window reads, one column more: the last pair of an odd filter row reads it, times a
    zero tap), rounded up to 4 bytes, then the channel's filter words."""
    rows = (p["OH"] - 1) * p["stride_h"] + p["KH"]
    cols = (p["OW"] - 1) * p["stride_w"] + p["KW"]
    plane = (rows * (cols + 1) * 2 + 3) // 4 * 4
    return int(plane + 4 * p["KH"] * ((p["KW"] + 1) // 2))


def window_bytes(p: dict[str, Any]) -> int:
    """conv2d's scratch: one output row's windows, each its taps rounded up to even, int16."""
    taps = p["KH"] * p["KW"] * p["C"]
    return int(p["OW"] * (taps + taps % 2) * 2)


def _conv(model: Model, op: Operator, p: dict[str, Any], arch: str,
          flash: int | None = None) -> str | None:
    taps = p["KH"] * p["KW"] * p["C"]
    if p["group"] != 1:
        return "a grouped convolution (tvmdev_cm takes none)"
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    if p["KH"] == 1 and p["KW"] == 1 and tvmdev_cm_1x1.is_pointwise(model, op):
        return tvmdev_cm_1x1.decline(model, op, p, *_operands(model, op, p), flash)
    if taps > TAPS_MAX and tvmdev_cm_conv.is_general(model, op):
        if any(t not in model.constants for t in op.inputs[2:] if t is not None):
            return "a bias computed at run time (tvmdev_cm lays it out ahead)"
        return tvmdev_cm_conv.decline(model, op, p, *_operands(model, op, p), flash)
    if p["KH"] * p["KW"] == 1 or taps > TAPS_MAX:
        return (f"{taps} taps per output channel in a {p['KH']}x{p['KW']} filter "
                f"(tvmdev_cm's conv2d takes 2 to {TAPS_MAX}: a first convolution)")
    if any(t not in model.constants for t in op.inputs[1:] if t is not None):
        return "a filter or bias computed at run time (tvmdev_cm lays them out ahead)"
    w, bias = _operands(model, op, p)
    if not requant_exact(w, bias, p):
        return ("an accumulator that may reach 2^30 after its left shift (tvmdev_cm's "
                "requantization doubles it)")
    return None


def _depthwise(model: Model, op: Operator, p: dict[str, Any], arch: str,
               flash: int | None = None) -> str | None:
    if p["mult"] != 1:
        return f"a channel multiplier of {p['mult']} (tvmdev_cm takes 1)"
    if p["dil_h"] != 1 or p["dil_w"] != 1:
        return "a dilated filter (tvmdev_cm takes none)"
    if p["KH"] != p["KW"] or p["KH"] not in SIZES:
        return f"a {p['KH']}x{p['KW']} filter (tvmdev_cm takes 3x3, 5x5 and 7x7)"
    if p["stride_h"] != p["stride_w"] or p["stride_h"] not in STRIDES:
        return (f"strides {p['stride_h']}x{p['stride_w']} (tvmdev_cm takes 1x1 and 2x2)")
    operands = [t for t in op.inputs[1:] if t is not None]
    if any(t not in model.constants for t in operands):
        return "a filter or bias computed at run time (tvmdev_cm lays them out ahead)"
    w, bias = _operands(model, op, p)
    if not requant_exact(w, bias, p):
        return ("an accumulator that may reach 2^30 after its left shift (tvmdev_cm's "
                "requantization doubles it)")
    if plane_bytes(p) > PLANE_MAX:
        return f"a plane of {plane_bytes(p)} bytes (tvmdev_cm takes at most {PLANE_MAX})"
    return None


def _operands(model: Model, op: Operator, p: dict[str, Any]
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """The constant filter and bias (or None) of a conv (taps x M: its output channels
    last) or a depthwise conv (1 x KH x KW x C)."""
    filt = op.inputs[1]
    assert filt is not None
    w = np.asarray(model.constants[filt], np.int64)
    if op.op == "conv2d":
        w = w.reshape(p["M"], -1).T
    else:
        w = w.reshape(1, p["KH"], p["KW"], p["C"] * p["mult"])
    b = op.inputs[2] if len(op.inputs) > 2 else None
    return w, None if b is None else np.asarray(model.constants[b], np.int64).reshape(-1)


def accumulator_bound(w: np.ndarray, bias: np.ndarray | None, input_offset: int
                      ) -> np.ndarray:
    """Per channel, the largest |accumulator| TFLM can reach: |bias| + sum(|w|) times the
    largest |x + input_offset| of an int8 x."""
    reach = max(abs(-128 + input_offset), abs(127 + input_offset))
    total = np.abs(w).reshape(-1, w.shape[-1]).sum(axis=0) * reach
    return np.asarray(total + (0 if bias is None else np.abs(bias)), np.int64)


def requant_exact(w: np.ndarray, bias: np.ndarray | None, p: dict[str, Any]) -> bool:
    """Whether every channel's accumulator, doubled after its left shift, fits int32."""
    shifts = np.asarray(p["output_shift"].values, np.int64)
    left = np.maximum(shifts, 0) + 1
    bound = accumulator_bound(w, bias, p["input_offset"])
    return bool(np.all(bound * (2 ** left) < 2**31))


Rule = Callable[[Model, Operator, dict[str, Any], str, int | None], str | None]
DECLINES: dict[str, Rule] = {"conv2d": _conv, "depthwise_conv2d": _depthwise,
                             "add": tvmdev_cm_mvedw.no_dsp}


def decline(model: Model, op: Operator, params: dict[str, Any], arch: str,
            flash: int | None = None) -> str | None:
    """Why tvmdev_cm does not serve ``op`` (None: it does); ``flash``: the bytes of flash
    the board lets it add (``library_flash``; None: none)."""
    if model.op_dtype(op) != "int8":
        return "not int8"
    if op.op == "fully_connected":
        return tvmdev_cm_fc.decline(model, op, params, arch)
    if arch == "mve":
        return tvmdev_cm_mve.decline(model, op, params)
    rule = DECLINES.get(op.op)
    return rule(model, op, params, arch, flash) if rule else None


def request(buffer: str, arch: str, params: dict[str, Any]) -> str:
    """No probe: tvmdev_cm sizes its scratch itself (:func:`scratch_bytes`)."""
    return ""


def scratch_bytes(buffer: str, arch: str, params: dict[str, Any]) -> int:
    """The bytes of one operator's scratch: depthwise_conv2d's int16 plane, conv2d's
    row of windows (a 1x1 filter's: one pixel widened); fully_connected's input row."""
    if buffer == "fc_vector":
        return tvmdev_cm_fc.scratch_bytes(arch, params)
    if arch == "mve":
        return tvmdev_cm_mve.scratch_bytes(buffer, params)
    if buffer == "windows" and params["KH"] == 1 and params["KW"] == 1:
        return tvmdev_cm_1x1.scratch_bytes(params)
    if buffer == "windows" and tvmdev_cm_conv.taps(params) > TAPS_MAX:
        return tvmdev_cm_conv.scratch_bytes(params)
    return window_bytes(params) if buffer == "windows" else plane_bytes(params)


def _wrap32(v: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in (v.astype(np.int64) + 2**31) % 2**32 - 2**31)


def pack_conv(w: np.ndarray, bias: np.ndarray | None, input_offset: int
              ) -> dict[str, CArray]:
    """The filter ``w`` (taps x M) as int16 pairs per output channel, and each channel's
    bias folded with ``input_offset`` times the sum of its taps."""
    taps, channels = w.shape
    padded = np.zeros((channels, taps + taps % 2), np.int64)
    padded[:, :taps] = w.T
    words = (padded[:, 0::2] & 0xFFFF) | (padded[:, 1::2] << 16)
    folded = (np.zeros(channels, np.int64) if bias is None else bias.astype(np.int64)) \
        + input_offset * padded.sum(axis=1)
    return {"packed_weights": CArray("int32_t", _wrap32(words.ravel()), replaces=(1,)),
            "folded_bias": CArray("int32_t", _wrap32(folded), replaces=(2,))}


def precomputed(model: Model, op: Operator, params: dict[str, Any],
                flash: int | None = None, arch: str = "") -> dict[str, CArray]:
    """conv2d's filter laid out and bias folded (the module's docstring; a 1x1 filter's
    widened within ``flash``, the board's budget, else its records only); depthwise's
    are widened by the kernel. fully_connected: its rows' folded biases
    (:mod:`.tvmdev_cm_fc`). The MVE path (``arch`` mve): tvmdev_cm_mve.py's."""
    if op.op == "fully_connected":
        return tvmdev_cm_fc.precomputed(model, op, params, arch)
    if arch == "mve":
        return tvmdev_cm_mve.precomputed(model, op, params)
    if op.op != "conv2d":
        return {}
    w, bias = _operands(model, op, params)
    if params["KH"] == 1 and params["KW"] == 1:
        if tvmdev_cm_1x1.widened(model, op, params, flash):
            return tvmdev_cm_1x1.pack(w, bias, params)
        return tvmdev_cm_1x1.pack_int8(w, bias, params)
    if tvmdev_cm_conv.taps(params) > TAPS_MAX:
        return tvmdev_cm_conv.pack(model, op, w, bias, params, flash)
    return pack_conv(w, bias, params["input_offset"])
