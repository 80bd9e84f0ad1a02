"""The numpy references of TFLM's signal ops, one function per op, on raw integer arrays
with the op's params (its flexbuffer options). Spectral subtraction carries state (the
noise estimate) from one invocation to the next: its reference takes the state in and
returns the new one."""

from __future__ import annotations

import numpy as np

from .arith import U32, log32, msb, sqrt64, wide_dynamic
from .fft import rfft_int16

PCAN_SNR_BITS = 12
PCAN_OUTPUT_BITS = 6


def window(x: np.ndarray, w: np.ndarray, shift: int) -> np.ndarray:
    """SignalWindow: each frame of len(w) samples times w, shifted right, saturated to
    int16."""
    frames = np.asarray(x, np.int64).reshape(-1, len(w))
    y = (frames * np.asarray(w, np.int64)) >> shift
    out: np.ndarray = np.clip(y, -32768, 32767).astype(np.int16)
    return out.reshape(np.shape(x))


def fft_auto_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SignalFftAutoScale: the samples shifted left so the largest magnitude fills int16,
    and the shift (int32 scalar). The largest magnitude is kept in an int16 as TFLM
    does, so -32768 wraps to itself and a later sample may replace it."""
    v = np.asarray(x, np.int64).ravel()
    top = int(np.abs(v).max()) if v.size else 0
    if top == 32768:  # the int16 maximum's wraparound, replayed in order
        top = 0
        for a in v.tolist():
            if a > top:
                top = a
            elif -a > top:
                top = ((-a + 32768) & 0xFFFF) - 32768
    bits = max(15 - int(msb(np.array(top & U32))), 0)
    y = ((v << bits) + 32768 & 0xFFFF) - 32768
    return y.astype(np.int16).reshape(np.shape(x)), np.array(bits, np.int32)


def rfft(x: np.ndarray, fft_length: int) -> np.ndarray:
    """SignalRfft (int16): each frame (the last dim) zero-padded to ``fft_length``, its
    fft_length/2 + 1 bins interleaved (real, imaginary)."""
    v = np.asarray(x, np.int16)
    frames = v.reshape(-1, v.shape[-1])
    out = np.stack([rfft_int16(f, fft_length) for f in frames])
    return out.reshape(*v.shape[:-1], fft_length + 2)


def energy(x: np.ndarray, start_index: int, end_index: int) -> np.ndarray:
    """SignalEnergy: re**2 + im**2 of the bins in [start_index, end_index) as uint32;
    the other bins are 0 (TFLM leaves them unwritten)."""
    v = np.asarray(x, np.int64).reshape(-1, 2)
    out = np.zeros(len(v), np.uint32)
    sel = v[start_index:end_index]
    out[start_index:end_index] = ((sel[:, 0] ** 2 + sel[:, 1] ** 2) & U32).astype(np.uint32)
    return out


def filter_bank(x: np.ndarray, weights: np.ndarray, unweights: np.ndarray,
                freq_starts: np.ndarray, weight_starts: np.ndarray, widths: np.ndarray,
                num_channels: int) -> np.ndarray:
    """SignalFilterBank: each channel's weighted sum of the energies plus the previous
    channel's unweighted one (triangular mel filters), uint64 with wraparound; channel 0
    (everything below the first band) is dropped."""
    v = [int(a) for a in np.asarray(x, np.uint32).ravel()]
    mask = (1 << 64) - 1
    out = []
    carry = 0
    for ch in range(num_channels + 1):
        acc, unacc = carry, 0
        f0, w0 = int(freq_starts[ch]), int(weight_starts[ch])
        for j in range(int(widths[ch])):
            acc = (acc + (int(weights[w0 + j]) & mask) * v[f0 + j]) & mask
            unacc = (unacc + (int(unweights[w0 + j]) & mask) * v[f0 + j]) & mask
        out.append(acc)
        carry = unacc
    return np.array(out[1:], np.uint64)


def filter_bank_square_root(x: np.ndarray, scale_bits: int) -> np.ndarray:
    """SignalFilterBankSquareRoot: the rounded square root, shifted right by the FFT's
    auto-scale bits, uint32."""
    if not 0 <= scale_bits < 32:
        raise ValueError(f"a square-root shift of {scale_bits} bits is outside [0, 32)")
    out: np.ndarray = (sqrt64(x) >> np.uint32(scale_bits)).astype(np.uint32)
    return out


def spectral_subtraction(x: np.ndarray, noise: np.ndarray, p: dict[str, int]
                         ) -> tuple[np.ndarray, np.ndarray]:
    """SignalFilterBankSpectralSubtraction: (output, new noise estimate), both uint32.
    Even channels smooth the estimate with ``smoothing``, odd ones with
    ``alternate_smoothing``; the output keeps at least ``min_signal_remaining`` (Q of
    ``spectral_subtraction_bits``) of the input."""
    v = np.asarray(x, np.int64)
    n = np.asarray(noise, np.int64)
    odd = (np.arange(len(v)) & 1) == 1
    sm = np.where(odd, p["alternate_smoothing"], p["smoothing"]) & U32
    osm = np.where(odd, p["alternate_one_minus_smoothing"], p["one_minus_smoothing"]) & U32
    sbits, ssbits = p["smoothing_bits"], p["spectral_subtraction_bits"]
    up = (v << sbits) & U32
    new = [((int(a) * int(b) + int(c) * int(d)) >> ssbits) & U32
           for a, b, c, d in zip(up, sm, n, osm, strict=True)]
    est = np.array(new, np.int64)
    capped = np.minimum(est, up)
    if p["clamping"]:
        est = capped
    floor = ((v * (p["min_signal_remaining"] & U32)) >> ssbits) & U32
    sub = (up - capped) >> sbits
    return np.maximum(sub, floor).astype(np.uint32), est.astype(np.uint32)


def noise_estimate(x: np.ndarray, noise: np.ndarray, p: dict[str, int]) -> np.ndarray:
    """The noise estimate spectral subtraction keeps, updated by one frame (uint32):
    :func:`spectral_subtraction`'s second output."""
    return spectral_subtraction(x, noise, {**p, "min_signal_remaining": 0})[1]


def subtract_noise(x: np.ndarray, noise: np.ndarray, p: dict[str, int]) -> np.ndarray:
    """Spectral subtraction's output given the updated estimate ``noise``: the input less
    the estimate (at most the input), at least ``min_signal_remaining`` of it."""
    v = np.asarray(x, np.int64)
    sbits, ssbits = p["smoothing_bits"], p["spectral_subtraction_bits"]
    up = (v << sbits) & U32
    capped = np.minimum(np.asarray(noise, np.int64), up)
    floor = ((v * (p["min_signal_remaining"] & U32)) >> ssbits) & U32
    out: np.ndarray = np.maximum((up - capped) >> sbits, floor).astype(np.uint32)
    return out


def pcan(x: np.ndarray, noise: np.ndarray, lut: np.ndarray, snr_shift: int) -> np.ndarray:
    """SignalPCAN: per-channel automatic gain (``lut``'s curve of the noise estimate),
    then the SNR's soft compression, uint32."""
    gain = wide_dynamic(noise, lut) & U32
    snr = np.array([(int(a) * int(g)) >> snr_shift & U32
                    for a, g in zip(np.asarray(x, np.int64), gain, strict=True)], np.int64)
    small = snr < (2 << PCAN_SNR_BITS)
    quad = (snr * snr & U32) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS)
    lin = ((snr >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1 << PCAN_OUTPUT_BITS)) & U32
    return np.where(small, quad, lin).astype(np.uint32)


def filter_bank_log(x: np.ndarray, output_scale: int, input_correction_bits: int
                    ) -> np.ndarray:
    """SignalFilterBankLog: ``output_scale`` * ln(x << input_correction_bits), rounded,
    capped at int16's max; 0 for a shifted input of 0 or 1."""
    v = (np.asarray(x, np.int64) << input_correction_bits) & U32
    big = v > 1
    logs = log32(np.where(big, v, 2), output_scale)
    return np.where(big, np.minimum(logs, 32767), 0).astype(np.int16)
