"""TFLM's signal-library custom ops (micro_speech's audio front end) as tvmdev ops, on
raw integers, their references in :mod:`tvmdev.model.signal`.

Two of TFLM's ops have two outputs; each is two tvmdev ops here, computing the same
bits: SignalFftAutoScale is ``signal_fft_shift`` (the shift, an int32 scalar) then
``signal_fft_scale`` (the samples shifted); SignalFilterBankSpectralSubtraction is
``signal_noise_estimate`` (the estimate, updated in place in a state tensor of the model,
which a reset zeroes) then ``signal_spectral_subtraction`` (the input less that estimate).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..opdef import Attr, OpDef
from ..s8.call import CArray, S8Call
from ..shapes import Shape, ShapeError, numel
from ..signal import reference as sig
from ..signal.arith import log_lut
from ..signal.fft import SAMP_MAX, radices
from .form import IntOp

_INT = Attr("int", None)
_SUBTRACTION = ("smoothing_bits", "spectral_subtraction_bits", "min_signal_remaining")
_NOISE = ("smoothing", "one_minus_smoothing", "alternate_smoothing",
          "alternate_one_minus_smoothing", "smoothing_bits", "spectral_subtraction_bits",
          "clamping")


def _shape(i: int) -> Any:
    def infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
        s = shapes[i]
        assert s is not None
        return s
    return infer


def _rfft_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    x = shapes[0]
    assert x is not None
    n = attrs["fft_length"]
    if not x or x[-1] > n:
        raise ShapeError(f"signal_rfft: frames of {x[-1] if x else 0} samples do not fit "
                         f"fft_length {n}")
    if n < 4 or n & (n - 1):
        raise ShapeError(f"signal_rfft: fft_length {n} is not a power of two >= 4")
    return (*x[:-1], n + 2)


def _energy_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    x = shapes[0]
    assert x is not None
    if len(x) != 1 or x[0] % 2:
        raise ShapeError(f"signal_energy takes one frame of (real, imaginary) pairs, not "
                         f"{list(x)}")
    return (x[0] // 2,)


def _channels(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    return (attrs["num_channels"],)


def _none(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]) -> dict[str, Any]:
    return {}


def _op(name: str, inputs: tuple[str, ...], attrs: tuple[str, ...], infer: Any, doc: str,
        struct: str, states: frozenset[str] = frozenset()) -> OpDef:
    return OpDef(name, inputs, frozenset(), ("output",), {a: _INT for a in attrs}, struct,
                 infer, _none, doc=doc, states=states)


OPDEFS = [
    _op("signal_window", ("input", "weights"), ("shift",), _shape(0),
        "each frame of len(weights) samples times weights, >> shift, saturated (int16)",
        "tvmk_signal_window_params"),
    _op("signal_fft_shift", ("input",), (), lambda s, a: (),
        "the left shift making the largest magnitude fill int16 (int32 scalar)",
        "tvmk_unary_params"),
    _op("signal_fft_scale", ("input", "shift"), (), _shape(0),
        "the samples shifted left by signal_fft_shift's shift (int16)",
        "tvmk_unary_params"),
    _op("signal_rfft", ("input",), ("fft_length",), _rfft_infer,
        "KISS FFT's int16 real FFT of each frame, bins as (real, imaginary) pairs",
        "tvmk_signal_rfft_params"),
    _op("signal_energy", ("input",), ("start_index", "end_index"), _energy_infer,
        "re^2 + im^2 of the bins in [start_index, end_index), else 0 (uint32)",
        "tvmk_signal_energy_params"),
    _op("signal_filter_bank", ("input", "weights", "unweights", "channel_frequency_starts",
                               "channel_weight_starts", "channel_widths"),
        ("num_channels",), _channels, "triangular filter bank of energies (uint64)",
        "tvmk_signal_filter_bank_params"),
    _op("signal_filter_bank_sqrt", ("input", "shift"), (), _shape(0),
        "rounded square root >> shift (uint32)", "tvmk_unary_params"),
    _op("signal_noise_estimate", ("input", "state"), _NOISE, _shape(0),
        "the spectral subtraction's noise estimate, updated in place in state (a model "
        "state tensor) and output (uint32)", "tvmk_signal_noise_params",
        frozenset({"state"})),
    _op("signal_spectral_subtraction", ("input", "noise"), _SUBTRACTION, _shape(0),
        "the input less the noise estimate, a floor kept (uint32)",
        "tvmk_signal_subtraction_params"),
    _op("signal_pcan", ("input", "noise", "gain_lut"), ("snr_shift",), _shape(0),
        "per-channel automatic gain and compression (uint32)", "tvmk_signal_pcan_params"),
    _op("signal_filter_bank_log", ("input",), ("output_scale", "input_correction_bits"),
        _shape(0), "output_scale * ln(input << input_correction_bits) (int16)",
        "tvmk_signal_log_params"),
]


def _in(c: S8Call, i: int) -> Shape:
    s = c.shapes[i]
    assert s is not None
    return s


def _bits(value: int, what: str, top: int = 31) -> int:
    if not 0 <= value <= top:
        raise ShapeError(f"{what} {value} is outside [0, {top}]")
    return value


def _window(c: S8Call) -> dict[str, Any]:
    w = _in(c, 1)
    if len(w) != 1 or w[0] < 1 or numel(_in(c, 0)) % w[0]:
        raise ShapeError(f"signal_window: weights {list(w)} do not tile the input")
    return {"count": numel(_in(c, 0)), "size": w[0],
            "shift": _bits(c.attrs["shift"], "shift")}


def _twiddles(n: int) -> dict[str, Any]:
    """Q15 twiddles of the n-point complex FFT, and of the real split (as KISS FFT
    rounds them, floor(0.5 + 32767 * f) in double precision)."""
    def q15(phases: np.ndarray) -> tuple[CArray, CArray]:
        re = np.floor(0.5 + SAMP_MAX * np.cos(phases)).astype(int)
        im = np.floor(0.5 + SAMP_MAX * np.sin(phases)).astype(int)
        return CArray("int16_t", tuple(re.tolist())), CArray("int16_t", tuple(im.tolist()))
    tw = q15(-2 * math.pi * np.arange(n) / n)
    split = q15(-math.pi * (np.arange(1, n // 2 + 1) / n + 0.5))
    return {"tw_re": tw[0], "tw_im": tw[1], "split_re": split[0], "split_im": split[1]}


def _rfft(c: S8Call) -> dict[str, Any]:
    x = _in(c, 0)
    n = c.attrs["fft_length"] // 2
    rad = radices(n)
    return {"frames": numel(x[:-1]), "length": x[-1], "fft_length": 2 * n,
            "stages": len(rad), "radices": CArray("int32_t", tuple(rad)), **_twiddles(n)}


def _energy(c: S8Call) -> dict[str, Any]:
    bins = c.out_shape[0]
    lo, hi = c.attrs["start_index"], c.attrs["end_index"]
    if not 0 <= lo <= hi <= bins:
        raise ShapeError(f"signal_energy: bins [{lo}, {hi}) of {bins}")
    return {"bins": bins, "start_index": lo, "end_index": hi}


def _filter_bank(c: S8Call) -> dict[str, Any]:
    n = c.attrs["num_channels"]
    if n < 1 or any(_in(c, i) != (n + 1,) for i in (3, 4, 5)) or _in(c, 1) != _in(c, 2):
        raise ShapeError(f"signal_filter_bank: {n} channels need {n + 1} starts and "
                         "widths, and as many weights as unweights")
    return {"num_channels": n, "input_count": numel(_in(c, 0)),
            "weight_count": numel(_in(c, 1))}


def _noise(c: S8Call) -> dict[str, Any]:
    a = c.attrs
    fields = {k: a[k] for k in _NOISE[:4]}  # int32, as TFLM reads them (the C: uint32)
    return {"count": numel(c.out_shape), **fields,
            "smoothing_bits": _bits(a["smoothing_bits"], "smoothing_bits"),
            "spectral_subtraction_bits": _bits(a["spectral_subtraction_bits"],
                                               "spectral_subtraction_bits"),
            "clamping": int(bool(a["clamping"]))}


def _subtraction(c: S8Call) -> dict[str, Any]:
    a = c.attrs
    return {"count": numel(c.out_shape),
            "smoothing_bits": _bits(a["smoothing_bits"], "smoothing_bits"),
            "spectral_subtraction_bits": _bits(a["spectral_subtraction_bits"],
                                               "spectral_subtraction_bits"),
            "min_signal_remaining": a["min_signal_remaining"]}


def _pcan(c: S8Call) -> dict[str, Any]:
    if _in(c, 1) != c.out_shape or len(_in(c, 2)) != 1 or _in(c, 2)[0] < 125:
        raise ShapeError("signal_pcan: the noise estimate must match the input and the "
                         "gain table hold 125 entries (three per octave of 32 bits)")
    return {"count": numel(c.out_shape), "snr_shift": _bits(c.attrs["snr_shift"],
                                                              "snr_shift", 63)}


def _log(c: S8Call) -> dict[str, Any]:
    return {"count": numel(c.out_shape), "output_scale": c.attrs["output_scale"],
            "input_correction_bits": _bits(c.attrs["input_correction_bits"],
                                           "input_correction_bits"),
            "lut": CArray("uint16_t", tuple(log_lut()))}


def _count(c: S8Call) -> dict[str, Any]:
    return {"count": numel(c.out_shape)}


def _ref(fn: Any) -> Any:
    def ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        return np.asarray(fn(c, [v for v in x if v is not None]))
    return ref


_REFS: dict[str, Any] = {
    "signal_window": lambda c, x: sig.window(x[0], x[1], c.attrs["shift"]),
    "signal_fft_shift": lambda c, x: sig.fft_auto_scale(x[0])[1],
    "signal_fft_scale": lambda c, x: _scale(x[0], int(x[1])),
    "signal_rfft": lambda c, x: sig.rfft(x[0], c.attrs["fft_length"]),
    "signal_energy": lambda c, x: sig.energy(x[0], c.attrs["start_index"],
                                             c.attrs["end_index"]),
    "signal_filter_bank": lambda c, x: sig.filter_bank(
        x[0], x[1], x[2], x[3], x[4], x[5], c.attrs["num_channels"]),
    "signal_filter_bank_sqrt": lambda c, x: sig.filter_bank_square_root(x[0], int(x[1])),
    # the new estimate from the state's (evaluate writes it back to the state tensor)
    "signal_noise_estimate": lambda c, x: np.asarray(sig.noise_estimate(x[0], x[1], c.attrs),
                                                     np.uint32),
    "signal_spectral_subtraction": lambda c, x: sig.subtract_noise(x[0], x[1], c.attrs),
    "signal_pcan": lambda c, x: sig.pcan(x[0], x[1], x[2], c.attrs["snr_shift"]),
    "signal_filter_bank_log": lambda c, x: sig.filter_bank_log(
        x[0], c.attrs["output_scale"], c.attrs["input_correction_bits"]),
}


def _scale(x: np.ndarray, shift: int) -> np.ndarray:
    if not 0 <= shift <= 15:
        raise ValueError(f"an FFT scale shift of {shift} is outside [0, 15]")
    v = (np.asarray(x, np.int64) << shift) & 0xFFFF
    out: np.ndarray = (((v + 0x8000) & 0xFFFF) - 0x8000).astype(np.int16)
    return out


_FORMS: dict[str, tuple[str, Any, tuple[str, ...]]] = {
    "signal_window": ("tvmk_signal_window_params", _window, ("int16", "int16", "int16")),
    "signal_fft_shift": ("tvmk_unary_params", lambda c: {"count": numel(_in(c, 0))},
                         ("int16", "int32")),
    "signal_fft_scale": ("tvmk_unary_params", _count, ("int16", "int32", "int16")),
    "signal_rfft": ("tvmk_signal_rfft_params", _rfft, ("int16", "int16")),
    "signal_energy": ("tvmk_signal_energy_params", _energy, ("int16", "uint32")),
    "signal_filter_bank": ("tvmk_signal_filter_bank_params", _filter_bank,
                           ("uint32", "int16", "int16", "int16", "int16", "int16", "uint64")),
    "signal_filter_bank_sqrt": ("tvmk_unary_params", _count, ("uint64", "int32", "uint32")),
    "signal_noise_estimate": ("tvmk_signal_noise_params", _noise,
                              ("uint32", "uint32", "uint32")),
    "signal_spectral_subtraction": ("tvmk_signal_subtraction_params", _subtraction,
                                    ("uint32", "uint32", "uint32")),
    "signal_pcan": ("tvmk_signal_pcan_params", _pcan, ("uint32", "uint32", "int16",
                                                       "uint32")),
    "signal_filter_bank_log": ("tvmk_signal_log_params", _log, ("uint32", "int16")),
}

OPS: dict[str, IntOp] = {name: IntOp(struct, params, _ref(_REFS[name]), dtypes, always=True)
                         for name, (struct, params, dtypes) in _FORMS.items()}
