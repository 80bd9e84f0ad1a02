"""Quantization: a tensor's affine quantization (:class:`Quant`, TFLite's spec, which
int8 tensors carry and :mod:`tvmdev.model.s8` derives kernel params from), and the 4-bit
block quantisation of weights (:class:`Q4Weight`).

Affine: real value = scale * (q - zero_point), one scale and zero point per tensor, or
one per slice along ``axis`` (per channel).

4-bit: the qsu4c32s1s0 layout KleidiAI's qsi4c32p packing reads, and its inverse, which
the numpy reference uses. A weight is an N x K matrix (the gemm's B as N rows of K:
transposed when the gemm does not transpose it). Each row is cut into blocks of
``block`` values along K; a block's scale is its largest-magnitude value divided by -8
(so that value is exactly -8), stored as bfloat16; a value is round(x / scale) clamped to
[-8, 7], stored plus 8 in 4 bits, two to a byte (even k in the low nibble). Dequantised:
(q - 8) * scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Quant:
    """A tensor's quantization: one scale and zero point per tensor, or one per slice
    along ``axis`` (per channel)."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        """Whether there is a scale per slice along ``axis``."""
        return len(self.scale) > 1


@dataclass(frozen=True, eq=False)
class Q4Weight:
    n: int
    k: int
    block: int
    data: np.ndarray    # uint8, n x k/2
    scales: np.ndarray  # uint16 (bfloat16 bits), n x k/block

    def dequantize(self) -> np.ndarray:
        """The N x K float32 matrix the quantised data stands for."""
        q = np.empty((self.n, self.k), np.int32)
        q[:, 0::2] = self.data & 0x0F
        q[:, 1::2] = self.data >> 4
        scales = bf16_to_f32(self.scales)
        deq = (q - 8).astype(np.float32) * np.repeat(scales, self.block, axis=1)
        return np.asarray(deq, dtype=np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest, ties to even); returns the 16-bit patterns."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return np.asarray((rounded >> 16).astype(np.uint16))


def bf16_to_f32(b: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns to float32 values."""
    return np.asarray((b.astype(np.uint32) << 16).view(np.float32))


def quantize(w_nk: np.ndarray, block: int) -> Q4Weight:
    """Quantise an N x K float matrix; K must be a multiple of ``block``."""
    n, k = w_nk.shape
    assert k % block == 0 and k % 2 == 0
    blocks = w_nk.astype(np.float32).reshape(n, k // block, block)
    idx = np.abs(blocks).argmax(axis=2)
    extreme = np.take_along_axis(blocks, idx[..., None], axis=2)[..., 0]
    scale = (extreme / np.float32(-8.0)).astype(np.float32)
    recip = np.divide(np.float32(1.0), scale, out=np.zeros_like(scale), where=scale != 0)
    q = np.clip(np.round(blocks * recip[..., None]), -8, 7).astype(np.int32) + 8
    q = q.reshape(n, k).astype(np.uint8)
    data = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
    return Q4Weight(n, k, block, np.ascontiguousarray(data), f32_to_bf16(scale))
