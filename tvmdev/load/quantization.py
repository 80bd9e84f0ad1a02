"""Quantization in a model description: ``quant: {scale: [...], zero_point: [...],
axis: N}`` on an int8 (or int32) tensor, and integer constants.

Real value = scale * (q - zero_point). One scale and zero point quantize the whole
tensor; several (one per slice along ``axis``, default 0) quantize it per channel.
Scales are positive finite numbers, stored as float32 (what TFLite stores); zero points
are integers the dtype holds. :func:`quant_fields` reads a description's ``quant``;
:func:`checked_quant` checks it, or a front end's (:meth:`QuantFields.of`), the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import Where, shown
from ..model.limits import float32
from ..model.quant import Quant
from ..model.shapes import Shape
from . import yamlio
from .fields import FLOAT32_MAX, Places, err, is_int, is_number, keys, mapping

QUANT_KEYS = ("scale", "zero_point", "axis")
INT_RANGE = {"int8": (-128, 127), "int16": (-(2**15), 2**15 - 1),
             "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class QuantFields:
    """A tensor's ``quant`` as given, before it is checked: its keys (scale, zero_point,
    axis), their places, and the place of the ``quant`` itself."""

    given: Mapping[str, Any]
    at: Places
    where: Where

    @classmethod
    def of(cls, q: Quant, at: Places) -> QuantFields:
        """A quantization a front end made, as the fields a description would give (a
        per-tensor one names no axis)."""
        return cls({"scale": list(q.scale), "zero_point": list(q.zero_point),
                    **({"axis": q.axis} if q.per_channel else {})}, at, at.where("quant"))


def quant_fields(node: yamlio.LineDict, what: str) -> QuantFields | None:
    """The ``quant`` of tensor ``what``'s node, if any (a mapping of known keys)."""
    if "quant" not in node:
        return None
    qn = mapping(node["quant"], f"quant of {what}", node.where("quant"))
    keys(qn, QUANT_KEYS, f"quant of {what}")
    return QuantFields(qn, qn, node.where("quant"))


def checked_quant(fields: QuantFields | None, what: str, dtype: str, shape: Shape | None,
                  where: Where, raw: bool = False) -> Quant | None:
    """The quantization of tensor ``what`` (at ``where``; ``shape``: None when inferred
    later), checked against its dtype and shape; an int8 tensor must have one, unless
    ``raw`` (raw integers a front end's CAST writes)."""
    if fields is None:
        if dtype == "int8" and not raw:
            raise err(f"{what} is int8 but has no quant", where,
                      hint="add quant: {scale: [S], zero_point: [Z]}")
        return None
    if dtype not in INT_RANGE:
        raise err(f"{what} is {dtype}: only integer tensors are quantized",
                  fields.where)
    qn, at = fields.given, fields.at
    for key in ("scale", "zero_point"):
        if key not in qn:
            raise err(f"quant of {what} needs '{key}'", at.where(),
                      hint="quant: {scale: [0.05], zero_point: [-3]}")
    scales, zeros = qn["scale"], qn["zero_point"]
    if not isinstance(scales, list) or not scales or not all(is_number(s) for s in scales):
        raise err(f"quant of {what}: scale must be a non-empty list of numbers, not "
                  f"{shown(scales)}", at.where("scale"))
    held = [float32(s) for s in scales]
    f32 = [s for s in held if s is not None and s > 0.0]
    if len(f32) != len(scales):
        raise err(f"quant of {what}: every scale must be a positive finite float32, got "
                  f"{shown(scales)}", at.where("scale"))
    lo, hi = INT_RANGE[dtype]
    if not isinstance(zeros, list) or not all(is_int(z) and lo <= z <= hi for z in zeros):
        raise err(f"quant of {what}: zero_point must be a list of integers in [{lo}, {hi}], "
                  f"not {shown(zeros)}", at.where("zero_point"))
    if len(zeros) != len(scales):
        raise err(f"quant of {what}: {len(scales)} scales but {len(zeros)} zero points",
                  at.where("zero_point"))
    _check_range(what, dtype, f32, zeros, at.where("scale"))
    axis = qn.get("axis", 0)
    if not is_int(axis) or axis < 0 or (shape is not None and axis >= max(len(shape), 1)):
        raise err(f"quant of {what}: axis must be a dim of the tensor, not {shown(axis)}",
                  at.where("axis") if "axis" in qn else at.where())
    if shape is not None and len(scales) > 1 and (not shape or shape[axis] != len(scales)):
        raise err(f"quant of {what}: {len(scales)} scales, but the tensor has "
                  f"{shape[axis] if shape else 1} slices along axis {axis}",
                  at.where("scale"))
    return Quant(tuple(f32), tuple(int(z) for z in zeros), int(axis))


def _check_range(what: str, dtype: str, scales: list[float], zeros: list[int],
                 where: Where) -> None:
    """Refuse a quantization whose values stand for reals beyond float32's range:
    ``(q - zero_point) * scale`` for the ``dtype`` values q farthest from the zero point
    (a scale of 3e38 is a finite float32, but int8 2 steps from the zero point is not)."""
    lo, hi = INT_RANGE[dtype]
    for s, z in zip(scales, zeros, strict=True):
        q = lo if z - lo > hi - z else hi
        if abs(q - z) * s > FLOAT32_MAX:
            raise err(f"quant of {what}: with scale {s:g} and zero point {z}, {dtype} {q} "
                      f"stands for {(q - z) * s:.4g}, beyond float32's range "
                      f"(±{FLOAT32_MAX:.4g})", where,
                      hint="a tensor's real values are (q - zero_point) * scale for every "
                           f"q of its dtype: its scale is at most "
                           f"{FLOAT32_MAX / abs(q - z):.4g} here")


# Raw integer dtypes (no quantization; tvmdev.model.rawint): a constant's range.
RAW_RANGE = {"int16": (-(2**15), 2**15 - 1), "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}


def int_constant(what: str, data: np.ndarray, dtype: str, where: Where) -> np.ndarray:
    """An integer constant's data as ``dtype``: integers (or integral floats, from
    ``values``) within its range."""
    lo, hi = {**INT_RANGE, **RAW_RANGE}[dtype]
    if data.dtype.kind == "f":
        if data.size and (not np.all(np.isfinite(data)) or np.any(data != np.round(data))):
            raise err(f"{what} is {dtype}: its values must be integers", where)
    elif data.dtype.kind not in "iu":
        raise err(f"{what} is {dtype}, not {data.dtype}", where)
    if data.size and (data.min() < lo or data.max() > hi):
        raise err(f"{what} has values outside {dtype}'s range [{lo}, {hi}]", where)
    return np.ascontiguousarray(data.astype(np.dtype(dtype)))
