"""Kernel scratch: the workspace a kernel needs for one call, beside its tensors.

A kernel library entry says what its kernel needs with ``scratch:``, either a number of
bytes or the name of a rule here. A rule computes the bytes from the params the call is
resolved into (:meth:`tvmdev.model.graph.Model.operator_params`) and from the target's
:class:`Tuning`, since a kernel's blocking is compiled for a target. The memory planner
gives each operator the most any kernel of its chain needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .recurrent import lstm_scratch, svdf_scratch

FLOAT = 4


@dataclass(frozen=True)
class Tuning:
    """How the portable kernels are compiled for a target, and what the planner gives them.

    ``gemm_mr``, ``gemm_nr`` and ``gemm_kc`` are gemm.c's TVMK_GEMM_MR / _NR / _KC;
    ``gemm_scratch_max`` is the most scratch one gemm or matmul call gets (the kernel packs
    fewer columns of B at a time with less; the results are the same). The defaults are
    gemm.c's off Cortex-M.
    """

    gemm_mr: int = 5
    gemm_nr: int = 16
    gemm_kc: int = 64
    gemm_scratch_max: int = 32768

    def defines(self) -> list[str]:
        """The C macros that compile the portable kernels with this tuning."""
        return [f"TVMK_GEMM_MR={self.gemm_mr}", f"TVMK_GEMM_NR={self.gemm_nr}",
                f"TVMK_GEMM_KC={self.gemm_kc}"]


def gemm_full_bytes(m: int, n: int, k: int, t: Tuning) -> int:
    """What tvmk_gemm_scratch_bytes(M, N, K) returns: room to pack all of op(B) at once."""
    if min(m, n, k) <= 0:
        return 0
    kc = min(t.gemm_kc, k)
    strips = -(-n // t.gemm_nr)
    return FLOAT * (t.gemm_mr * t.gemm_nr + t.gemm_mr * kc + strips * t.gemm_nr * kc)


def gemm_pack(params: dict[str, Any], t: Tuning) -> int:
    """tvmk_gemm_f32 / tvmk_matmul_f32: the output tile, a sliver of A and strips of B: one
    when A is one sliver (M <= MR: each strip is used once, so more would only be copied
    sooner), else as many as ``gemm_scratch_max`` allows (at least one, at most all: each
    block of B costs a repacking of A)."""
    m, n, k = int(params["M"]), int(params["N"]), int(params["K"])
    full = gemm_full_bytes(m, n, k, t)
    if full == 0:
        return 0
    kc = min(t.gemm_kc, k)
    fixed = FLOAT * (t.gemm_mr * t.gemm_nr + t.gemm_mr * kc)
    strip = FLOAT * t.gemm_nr * kc
    if m <= t.gemm_mr:
        return fixed + strip
    if full <= t.gemm_scratch_max:
        return full
    return fixed + max(1, (t.gemm_scratch_max - fixed) // strip) * strip


def ring_rows(p: dict[str, Any]) -> int:
    """The input rows a depthwise convolution writing its output over its input keeps
    (runtime/kernels/portable/inplace_rows.h): before it writes output row o (its images'
    rows counted one after another), it copies into a ring every input row those bytes
    cover that some output row from o on still reads; the ring holds, at the most, the
    rows from the first still read to the last covered."""
    n, h, oh = int(p["N"]), int(p["H"]), int(p["OH"])
    row_in = int(p["W"]) * int(p["C"])
    row_out = int(p["OW"]) * int(p["C"]) * int(p["mult"])
    kh, s, pad, dil = int(p["KH"]), int(p["stride_h"]), int(p["pad_top"]), int(p["dil_h"])
    firsts = [next((y for y in (o * s - pad + k * dil for k in range(kh)) if 0 <= y < h), h)
              for o in range(oh)]  # the first row each reads (h: none)
    for o in range(oh - 2, -1, -1):  # what rows from o on read (dilation reads back)
        firsts[o] = min(firsts[o], firsts[o + 1])
    most = 0
    for g in range(n * oh):
        covered = min(((g + 1) * row_out - 1) // row_in, n * h - 1) if row_in else -1
        most = max(most, covered - (g // oh * h + firsts[g % oh]) + 1)
    return most


def depthwise_rows(params: dict[str, Any], t: Tuning) -> int:
    """int8 depthwise_conv2d in place: its ring of input rows (:func:`ring_rows`)."""
    return ring_rows(params) * int(params["W"]) * int(params["C"])


def depthwise_rows_f32(params: dict[str, Any], t: Tuning) -> int:
    """float32 depthwise_conv2d in place: its ring of input rows (:func:`ring_rows`)."""
    return FLOAT * depthwise_rows(params, t)


@dataclass(frozen=True)
class ScratchRule:
    name: str
    ops: tuple[str, ...]  # the ops whose params the rule reads
    need: Callable[[dict[str, Any], Tuning], int]


RULES: dict[str, ScratchRule] = {r.name: r for r in [
    ScratchRule("gemm_pack", ("gemm", "matmul"), gemm_pack),
    ScratchRule("svdf", ("svdf",), svdf_scratch),
    ScratchRule("lstm", ("lstm",), lstm_scratch),
    # depthwise_pointwise: one output row of the depthwise convolution (int8)
    ScratchRule("dw_row", ("depthwise_pointwise",),
                lambda p, t: int(p["OW"]) * int(p["C"]) * int(p["mult"])),
    ScratchRule("depthwise_rows", ("depthwise_conv2d",), depthwise_rows),
    ScratchRule("depthwise_rows_f32", ("depthwise_conv2d",), depthwise_rows_f32),
]}


class OwnRule(Protocol):
    """A rule a library brings with it (a custom op's: :class:`.custom.CustomScratch`)."""

    def need(self, params: dict[str, Any]) -> int:
        """The bytes one call needs, from its params."""
        ...


def scratch_need(spec: str | int | OwnRule | None, params: dict[str, Any],
                 tuning: Tuning) -> int:
    """The bytes a kernel whose library says ``scratch: spec`` needs for one call."""
    if spec is None:
        return 0
    if isinstance(spec, int):
        return spec
    if not isinstance(spec, str):
        return spec.need(params)
    return RULES[spec].need(params, tuning)
