"""TFLite's builtins on raw integers, as TFLM computes them: CAST (C's conversion:
modulo 2**bits between integer types, the value as float32 from one), ADD, MUL, DIV (C's
division, truncating toward zero) and MAXIMUM, MINIMUM on int32 with numpy broadcasting
and the fused activation's clamp (int32 sums and products wrap, as TFLM's do in
practice), CONCATENATION, RESHAPE and STRIDED_SLICE (strided_slice's, on int16, int32 and
uint32)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..opdef import OpDef
from ..regions import concat_params
from ..s8.call import S8Call
from ..shapes import ShapeError, binary_params, numel
from ..slicing import strided_slice_params, strided_slice_reference
from .form import IntOp, arg

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
# TFLM's CalculateActivationRange<int32_t>: each fused activation's clamp.
_ACT_RANGE = {"NONE": (INT32_MIN, INT32_MAX), "RELU": (0, INT32_MAX), "RELU6": (0, 6),
              "RELU_N1_TO_1": (-1, 1)}
_INTS = "int16|int32|uint32"


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((np.asarray(v, np.int64) - INT32_MIN) & 0xFFFFFFFF) + INT32_MIN


def _one_dtype(c: S8Call) -> bool:
    """Refuses a copy between tensors of different dtypes."""
    given = {d for d in c.dtypes if d is not None}
    if len(given) != 1:
        raise ShapeError(f"its tensors must share one dtype, not {', '.join(sorted(given))}")
    return True


def _count(c: S8Call) -> dict[str, Any]:
    return {"count": numel(c.out_shape)}


def _cast_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = arg(x, 0)
    to = np.dtype(str(c.dtypes[-1]))
    if to.kind == "f":
        return v.astype(np.float32)
    bits = 8 * to.itemsize
    w = np.asarray(v, np.int64) & ((1 << bits) - 1)
    if to.kind == "i":
        w = np.where(w >= 1 << (bits - 1), w - (1 << bits), w)
    return w.astype(to)


def _binary_params(c: S8Call) -> dict[str, Any]:
    act = c.attrs.get("activation", "NONE")
    if act not in _ACT_RANGE:
        raise ShapeError(f"the fused activation {act} has no int32 form (TFLM's int32 "
                         "kernels ignore it)")
    p = binary_params(c.shapes, c.out_shape, {})
    lo, hi = _ACT_RANGE[act]
    return {**p, "act_min": lo, "act_max": hi}


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if (b == 0).any():
        raise ValueError("a division by zero (TFLM's int32 DIV traps)")
    q: np.ndarray = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)
    if (q > INT32_MAX).any():
        raise ValueError("INT32_MIN / -1 (overflows int32; TFLM's int32 DIV traps)")
    return q


_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": lambda a, b: _wrap32(a + b), "mul": lambda a, b: _wrap32(a * b), "div": _div,
    "maximum": np.maximum, "minimum": np.minimum}


def _binary_ref(op: str) -> Any:
    def ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
        p = _binary_params(c)
        a, b = np.broadcast_arrays(arg(x, 0).astype(np.int64), arg(x, 1).astype(np.int64))
        out = np.clip(_BINARY[op](a, b), p["act_min"], p["act_max"])
        return np.asarray(out, np.int32).reshape(c.out_shape)
    return ref


def _concat_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    return np.concatenate([v for v in x if v is not None], axis=c.attrs["axis"])


def _reshape_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    return arg(x, 0).reshape(c.out_shape)


def _slice_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    return strided_slice_reference(arg(x, 0), c.attrs)


OPDEFS = [
    OpDef("cast", ("input",), frozenset(), ("output",), {}, "tvmk_unary_params",
          lambda s, a: s[0] or (), lambda s, o, a: {"count": numel(o)},
          doc="each element converted to the output's dtype, as C converts"),
]


def _entry(op: str) -> IntOp:
    return IntOp("tvmk_int_binary_params", _binary_params, _binary_ref(op),
                 ("int32", "int32", "int32"))


OPS: dict[str, IntOp] = {
    "cast": IntOp("tvmk_unary_params", _count, _cast_ref,
                  ("int8|int16|int32|uint32", "int8|int16|int32|uint32|float32"),
                  always=True),
    **{op: _entry(op) for op in _BINARY},
    "concat": IntOp("tvmk_concat_params", lambda c: concat_params(
        c.shapes, c.out_shape, c.attrs) if _one_dtype(c) else {}, _concat_ref,
        (_INTS, _INTS)),
    "reshape": IntOp("tvmk_unary_params", lambda c: _count(c) if _one_dtype(c) else {},
                     _reshape_ref, (_INTS, _INTS)),
    # strided_slice's byte walk (tvmdev.model.slicing) on int16, int32 and uint32
    "strided_slice": IntOp("tvmk_strided_slice_params", lambda c: strided_slice_params(
        c.shapes, c.out_shape, c.attrs), _slice_ref, (_INTS, _INTS)),
}
