"""The int16 real FFT TFLM's SignalRfft computes (KISS FFT built with FIXED_POINT 16),
reproduced bit for bit: a complex FFT of half the length on the even and odd samples as
real and imaginary parts, radix-4 stages (radix 2 for a leftover factor) each dividing
its inputs by the radix with rounding, Q15 twiddles rounded from double precision, then
the split into the real transform's bins with one more halving.

Arithmetic is int16 storage of int32 products, as the fixed-point macros do: a product
a * b of int16 values is rounded back by adding 2**14 and shifting right by 15.
"""

from __future__ import annotations

import math

import numpy as np

SAMP_MAX = 32767


def _s16(v: np.ndarray) -> np.ndarray:
    """int64 values stored into int16 (modulo 2**16), as C's assignment does."""
    return ((np.asarray(v, np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def _s32(v: np.ndarray) -> np.ndarray:
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _round15(v: np.ndarray) -> np.ndarray:
    """An int32 product back to int16: (v + 2**14) >> 15."""
    return _s16(_s32(v + (1 << 14)) >> 15)


def _div(v: np.ndarray, k: int) -> np.ndarray:
    """v / k the fixed-point way: v times (32767 // k) in Q15, rounded."""
    return _round15(v * (SAMP_MAX // k))


def _cmul(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    return (_round15(_s32(ar * br) - _s32(ai * bi)),
            _round15(_s32(ar * bi) + _s32(ai * br)))


def _q15(phase: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of ``phase`` in Q15: floor(0.5 + 32767 * f(phase))."""
    return (np.floor(0.5 + SAMP_MAX * np.cos(phase)).astype(np.int64),
            np.floor(0.5 + SAMP_MAX * np.sin(phase)).astype(np.int64))


def radices(n: int) -> list[int]:
    """The radix of each stage, outermost first: 4 while 4 divides n, then 2; refuses
    what is not a power of two."""
    if n < 2 or n & (n - 1):
        raise ValueError(f"the complex FFT length {n} is not a power of two >= 2")
    out = []
    while n > 1:
        p = 4 if n % 4 == 0 else 2
        out.append(p)
        n //= p
    return out


def complex_fft(re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The forward complex FFT of int16 ``re`` + i ``im`` (length n, a power of two),
    scaled by 1/n with the per-stage rounding of the fixed-point decimation in time."""
    n = len(re)
    tw_r, tw_i = _q15(-2 * math.pi * np.arange(n) / n)
    return _stage(np.asarray(re, np.int64), np.asarray(im, np.int64), radices(n), 1,
                  tw_r, tw_i)


def _stage(re: np.ndarray, im: np.ndarray, rad: list[int], fstride: int,
           tw_r: np.ndarray, tw_i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The length-len(re) transform: radix ``rad[0]``'s p sub-transforms of the samples
    taken every p, each of length m, then the butterflies combining them."""
    p = rad[0]
    m = len(re) // p
    subs = []
    for q in range(p):
        if m == 1:
            subs.append((re[q:q + 1], im[q:q + 1]))
        else:
            subs.append(_stage(re[q::p], im[q::p], rad[1:], fstride * p, tw_r, tw_i))
    fr = np.concatenate([s[0] for s in subs])
    fi = np.concatenate([s[1] for s in subs])
    k = np.arange(m)
    if p == 2:
        return _bfly2(fr, fi, m, tw_r[k * fstride], tw_i[k * fstride])
    return _bfly4(fr, fi, m, [(tw_r[k * fstride * j], tw_i[k * fstride * j])
                              for j in (1, 2, 3)])


def _bfly2(fr: np.ndarray, fi: np.ndarray, m: int, wr: np.ndarray, wi: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    ar, ai = _div(fr[:m], 2), _div(fi[:m], 2)
    br, bi = _div(fr[m:], 2), _div(fi[m:], 2)
    tr, ti = _cmul(br, bi, wr, wi)
    return (np.concatenate([_s16(ar + tr), _s16(ar - tr)]),
            np.concatenate([_s16(ai + ti), _s16(ai - ti)]))


def _bfly4(fr: np.ndarray, fi: np.ndarray, m: int,
           tw: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    q = [(_div(fr[j * m:(j + 1) * m], 4), _div(fi[j * m:(j + 1) * m], 4))
         for j in range(4)]
    s0 = _cmul(*q[1], *tw[0])
    s1 = _cmul(*q[2], *tw[1])
    s2 = _cmul(*q[3], *tw[2])
    s5 = (_s16(q[0][0] - s1[0]), _s16(q[0][1] - s1[1]))
    f0 = (_s16(q[0][0] + s1[0]), _s16(q[0][1] + s1[1]))
    s3 = (_s16(s0[0] + s2[0]), _s16(s0[1] + s2[1]))
    s4 = (_s16(s0[0] - s2[0]), _s16(s0[1] - s2[1]))
    out2 = (_s16(f0[0] - s3[0]), _s16(f0[1] - s3[1]))
    out0 = (_s16(f0[0] + s3[0]), _s16(f0[1] + s3[1]))
    out1 = (_s16(s5[0] + s4[1]), _s16(s5[1] - s4[0]))
    out3 = (_s16(s5[0] - s4[1]), _s16(s5[1] + s4[0]))
    outs = [out0, out1, out2, out3]
    return (np.concatenate([o[0] for o in outs]), np.concatenate([o[1] for o in outs]))


def rfft_int16(x: np.ndarray, fft_length: int) -> np.ndarray:
    """SignalRfft on one frame of int16 ``x`` (zero-padded to ``fft_length``): the
    fft_length/2 + 1 bins as interleaved int16 (real, imaginary) pairs."""
    frame = np.zeros(fft_length, np.int64)
    frame[:len(x)] = np.asarray(x, np.int64)
    n = fft_length // 2
    zr, zi = complex_fft(frame[0::2], frame[1::2])
    sr, si = _q15(-math.pi * ((np.arange(1, n // 2 + 1)) / n + 0.5))
    out_r = np.zeros(n + 1, np.int64)
    out_i = np.zeros(n + 1, np.int64)
    dc_r, dc_i = _div(zr[0:1], 2), _div(zi[0:1], 2)
    out_r[0], out_r[n] = _s16(dc_r + dc_i)[0], _s16(dc_r - dc_i)[0]
    k = np.arange(1, n // 2 + 1)
    pr, pi = _div(zr[k], 2), _div(zi[k], 2)
    qr, qi = _div(zr[n - k], 2), _div(_s16(-zi[n - k]), 2)
    f1 = (_s16(pr + qr), _s16(pi + qi))
    f2 = (_s16(pr - qr), _s16(pi - qi))
    tr, ti = _cmul(*f2, sr, si)
    out_r[k], out_i[k] = _s16((f1[0] + tr) >> 1), _s16((f1[1] + ti) >> 1)
    out_r[n - k], out_i[n - k] = _s16((f1[0] - tr) >> 1), _s16((ti - f1[1]) >> 1)
    out = np.empty(2 * (n + 1), np.int16)
    out[0::2], out[1::2] = out_r, out_i
    return out
