"""TFLite operators on raw (unquantized) integer tensors, mapped onto tvmdev's
raw-integer forms (:mod:`tvmdev.model.rawint`): TFLM's signal-library custom ops (the
audio front end of micro_speech: SignalWindow, SignalRfft, SignalFilterBank, ...), with
their flexbuffer options as attributes, and the builtins such a model computes with on
int16, int32 and uint32 values (CAST, ADD, MUL, DIV, MAXIMUM, MINIMUM, CONCATENATION,
RESHAPE, STRIDED_SLICE as strided_slice).

:func:`converter` picks the converter of an operator that takes this form; the others go
to :mod:`.tflite_ops`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import tflite_slice
from .graph import Unsupported
from .tflite_context import Context, activation, with_activation

if TYPE_CHECKING:
    from .tflite import TfGraph, TfOp

RAW = frozenset({"int16", "int32", "uint32", "uint64"})
_TFL_INT16 = 7  # TensorType INT16: SignalRfft's "T" for its int16 kernel


def _options(ctx: Context, *keys: str) -> dict[str, int]:
    """The custom operator's flexbuffer options, each of ``keys`` as an int."""
    from flatbuffers import flexbuffers
    raw = ctx.op.raw
    if not raw.CustomOptionsLength():
        raise Unsupported("no custom options")
    try:
        opts = flexbuffers.Loads(bytes(raw.CustomOptionsAsNumpy()))
    except Exception:  # noqa: BLE001 - any decoding failure is a corrupt option map
        raise Unsupported("unreadable custom options") from None
    if not isinstance(opts, dict):
        raise Unsupported("custom options that are not a map")
    missing = [k for k in keys if k not in opts]
    if missing:
        raise Unsupported("custom options without " + ", ".join(missing))
    bad = [k for k in keys if not isinstance(opts[k], (int, bool))]
    if bad:
        raise Unsupported("custom options " + ", ".join(bad) + " not integers")
    return {k: int(opts[k]) for k in keys}


def _emit(ctx: Context, op: str, inputs: list[str], out: int, attrs: dict[str, Any]) -> str:
    t = ctx.g.tensors[ctx.op.outputs[out]]
    ctx.b.emit(ctx.op.kind, op, inputs, t.cname, attrs, t.dtype, t.quant)
    return t.cname


def _single(op: str, *keys: str) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        ins = [ctx.inp(i) for i in range(len(ctx.op.inputs))]
        _emit(ctx, op, ins, 0, _options(ctx, *keys) if keys else {})
    convert.__doc__ = f"{op}, its options as attributes."
    return convert


def fft_auto_scale(ctx: Context) -> None:
    """SignalFftAutoScale: signal_fft_shift (output 1), then signal_fft_scale (output 0)."""
    x = ctx.inp(0)
    shift = _emit(ctx, "signal_fft_shift", [x], 1, {})
    _emit(ctx, "signal_fft_scale", [x, shift], 0, {})


def rfft(ctx: Context) -> None:
    """SignalRfft on int16 (its "T" option 7); the others are refused."""
    o = _options(ctx, "T", "fft_length")
    if o["T"] != _TFL_INT16:
        raise Unsupported(f"T {o['T']}: tvmdev takes int16, T 7")
    _emit(ctx, "signal_rfft", [ctx.inp(0)], 0, {"fft_length": o["fft_length"]})


_NOISE = ("smoothing", "one_minus_smoothing", "alternate_smoothing",
          "alternate_one_minus_smoothing", "smoothing_bits", "spectral_subtraction_bits",
          "clamping")


def spectral_subtraction(ctx: Context) -> None:
    """SignalFilterBankSpectralSubtraction: signal_noise_estimate (output 1), then
    signal_spectral_subtraction (output 0). The estimate is kept between runs in a state
    tensor of its own (uint32, one per channel), which a reset zeroes. TFLM keeps it in a
    persistent buffer of the op rather than a variable tensor, zeroed at Prepare and by
    the op's Reset (MicroInterpreter::Reset): the same values, so tvmdev's reset of the
    state region (every state tensor: also an LSTM's) is TFLM's Reset of the model."""
    o = _options(ctx, *_NOISE, "min_signal_remaining", "num_channels")
    x = ctx.inp(0)
    if ctx.b.shapes[x] != (o["num_channels"],):
        raise Unsupported(f"num_channels {o['num_channels']} for an input of "
                          f"{list(ctx.b.shapes[x])}")
    out = ctx.g.tensors[ctx.op.outputs[1]]
    state = ctx.b.add_state(ctx.b.fresh(f"{out.cname}_state"), ctx.b.shapes[x], "uint32")
    noise = _emit(ctx, "signal_noise_estimate", [x, state], 1, {k: o[k] for k in _NOISE})
    _emit(ctx, "signal_spectral_subtraction", [x, noise], 0,
          {k: o[k] for k in ("smoothing_bits", "spectral_subtraction_bits",
                             "min_signal_remaining")})


def filter_bank(ctx: Context) -> None:
    """SignalFilterBank: its five tables must be constants, each channel's span within
    the energies and the weights (checked here, where the values are known)."""
    o = _options(ctx, "num_channels")
    tables = [ctx.tensor(i).data for i in range(1, 6)]
    if any(t is None for t in tables):
        raise Unsupported("tables that are not constants")
    w, _, freq, wstart, width = (np.asarray(t, np.int64).ravel() for t in tables
                                 if t is not None)
    n = o["num_channels"] + 1
    bins = int(np.prod(ctx.tensor(0).shape))
    if min(len(freq), len(wstart), len(width)) < n or (width < 0).any() or (
            (freq[:n] < 0) | (freq[:n] + width[:n] > bins) | (wstart[:n] < 0)
            | (wstart[:n] + width[:n] > len(w))).any():
        raise Unsupported("channel tables reaching outside the energies or weights")
    ins = [ctx.inp(i) for i in range(6)]
    _emit(ctx, "signal_filter_bank", ins, 0, o)


SIGNAL: dict[str, Callable[[Context], None]] = {
    "CUSTOM:SignalWindow": _single("signal_window", "shift"),
    "CUSTOM:SignalFftAutoScale": fft_auto_scale,
    "CUSTOM:SignalRfft": rfft,
    "CUSTOM:SignalEnergy": _single("signal_energy", "start_index", "end_index"),
    "CUSTOM:SignalFilterBank": filter_bank,
    "CUSTOM:SignalFilterBankSquareRoot": _single("signal_filter_bank_sqrt"),
    "CUSTOM:SignalFilterBankSpectralSubtraction": spectral_subtraction,
    "CUSTOM:SignalPCAN": _single("signal_pcan", "snr_shift"),
    "CUSTOM:SignalFilterBankLog": _single("signal_filter_bank_log", "output_scale",
                                          "input_correction_bits"),
}


def _binary(op: str, options: str | None) -> Callable[[Context], None]:
    def convert(ctx: Context) -> None:
        attrs: dict[str, Any] = {}
        if options is not None:
            attrs = with_activation({}, activation(ctx.options(options)))
        _emit(ctx, op, [ctx.inp(0), ctx.inp(1)], 0, attrs)
    convert.__doc__ = f"{op.upper()} on int32."
    return convert


def concatenation(ctx: Context) -> None:
    """CONCATENATION without a fused activation."""
    o = ctx.options("ConcatenationOptions")
    if o is not None and activation(o) != "NONE":
        raise Unsupported("a fused activation on integers")
    axis = int(o.Axis()) if o is not None else 0
    _emit(ctx, "concat", [ctx.inp(i) for i in range(len(ctx.op.inputs))], 0,
          {"axis": axis})


def _reshape(ctx: Context) -> None:
    _emit(ctx, "reshape", [ctx.inp(0)], 0, {"shape": ctx.static_shape()})


BUILTINS: dict[str, Callable[[Context], None]] = {
    "CAST": _single("cast"),
    "ADD": _binary("add", "AddOptions"),
    "MUL": _binary("mul", "MulOptions"),
    "DIV": _binary("div", "DivOptions"),
    "MAXIMUM": _binary("maximum", None),
    "MINIMUM": _binary("minimum", None),
    "CONCATENATION": concatenation,
    "RESHAPE": _reshape,
    "STRIDED_SLICE": tflite_slice.strided_slice,  # the float and int8 checks, masks
}


def converter(g: TfGraph, op: TfOp) -> Callable[[Context], None] | None:
    """The raw-integer converter of ``op``: a signal op's, CAST's (except between float32
    and int8 quantized, which is no TFLite CAST), or a builtin's whose every tensor is a
    raw integer (int16, int32, uint32, uint64, without quantization); None otherwise."""
    if op.kind in SIGNAL:
        return SIGNAL[op.kind]
    ts = [g.tensors[j] for j in (*op.inputs, *op.outputs) if j >= 0]
    if op.kind == "CAST":
        return BUILTINS["CAST"]
    # RESHAPE's shape operand is int32 whatever the data's dtype: the data decides.
    data = ts[:1] + [g.tensors[j] for j in op.outputs] if op.kind == "RESHAPE" else ts
    if op.kind in BUILTINS and all(t.dtype in RAW and t.quant is None for t in data):
        return BUILTINS[op.kind]
    return None
