"""Checks of the fields of a model description: each refuses a value of the wrong type
or out of range with one line that names the item (and quotes at most a short piece of
what was given)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import TvmdevError, Where, shown, shown_count
from ..model.limits import INT32_MAX, INT32_MIN, float32, object_problem
from ..model.ops import DTYPES
from ..model.shapes import MAX_DIMS, Shape, numel
from . import yamlio

# The kernels index tensors with int32_t, so no tensor may hold more elements.
MAX_TENSOR_ELEMENTS = 2**31 - 1
# A constant is compiled into the program: 64 MiB of float32 at most.
MAX_CONSTANT_ELEMENTS = 2**24
FLOAT32_MAX = float(np.finfo(np.float32).max)


class Places(Protocol):
    """Where the fields of an item are: a YAML mapping (:class:`~.yamlio.LineDict`, the
    line of each key), or :class:`InFile`."""

    def where(self, key: str | None = None) -> Where:
        """The place of field ``key`` (or of the item)."""
        ...


@dataclass(frozen=True)
class InFile:
    """The places of an item that has no lines (a model a front end made): its file."""

    file: str

    def where(self, key: str | None = None) -> Where:
        """The file, whatever the field."""
        return Where(self.file)


def err(msg: str, where: Where, hint: str | None = None) -> TvmdevError:
    """The error of a model field."""
    return TvmdevError(msg, where, hint)


def is_int(value: Any) -> bool:
    """An integer, not a boolean."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An integer or a float, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def mapping(node: Any, what: str, where: Where) -> yamlio.LineDict:
    """``node`` if it is a mapping."""
    if not isinstance(node, dict):
        raise err(f"{what} must be a mapping, not {shown(node)}", where)
    return node  # type: ignore[return-value]


def optional(node: dict[str, Any], key: str, empty: Any) -> Any:
    """``node[key]``, or ``empty`` when the key is absent or null (but not when it is
    another false value such as 0 or '', which its check then refuses)."""
    value = node.get(key)
    return empty if value is None else value


def keys(node: yamlio.LineDict, allowed: tuple[str, ...], what: str) -> None:
    """Every key of ``node`` is one of ``allowed``."""
    for key in node:
        if key not in allowed:
            raise err(f"unknown key {shown(key)} in {what}", node.where(key),
                      hint="allowed keys: " + ", ".join(allowed))


def name_in(value: Any, table: Any) -> bool:
    """``value`` is a string naming an entry of ``table`` (a list, an unhashable value
    is simply not a name)."""
    return isinstance(value, str) and value in table


def shape(node: Any, what: str, where: Where, limit: int = MAX_TENSOR_ELEMENTS) -> Shape:
    """A tensor shape: up to 6 positive integers, at most ``limit`` elements."""
    if not isinstance(node, list) or not all(is_int(d) for d in node):
        raise err(f"shape of {what} must be a list of integers, not {shown(node)}", where)
    if any(d <= 0 for d in node):
        raise err(f"shape of {what} has a dimension <= 0: {shown(node)}", where)
    if len(node) > MAX_DIMS:
        raise err(f"shape of {what} has {len(node)} dims; at most {MAX_DIMS} are supported",
                  where)
    check_elements(tuple(node), what, where, limit)
    return tuple(node)


def check_elements(dims: Shape, what: str, where: Where, limit: int = MAX_TENSOR_ELEMENTS
                   ) -> None:
    """A shape holds at most ``limit`` elements, and is one C object a 32-bit target can
    declare (every dtype is 4 bytes an element: float32, and q4c32 sized as its floats)."""
    if numel(dims) > limit:
        why = ("a constant is compiled into the program" if limit < MAX_TENSOR_ELEMENTS
               else "the kernels index tensors with int32_t")
        raise err(f"{what} has {shown_count(numel(dims))} elements; at most {limit} are "
                  f"supported ({why})", where)
    problem = object_problem(numel(dims) * 4)
    if problem is not None:
        raise err(f"{what} {shown(list(dims))} has {problem}", where)


def dtype(node: Any, what: str, where: Where) -> str:
    """A supported dtype."""
    if not name_in(node, DTYPES):
        raise err(f"unknown dtype {shown(node)} for {what}", where,
                  hint="supported dtypes: " + ", ".join(DTYPES))
    return str(node)


def attr_numbers(attrs: Mapping[str, Any], floats: Collection[str], what: str, at: Places
                 ) -> None:
    """Attribute values become C ``float`` fields (the attributes named in ``floats``) and
    ``int32_t`` fields (the others): each must fit its type. Whether a value has the
    right type at all is the op's check."""
    for key, value in attrs.items():
        for v in value if isinstance(value, list) else [value]:
            # inf and nan are the op's check ("not a finite float32")
            if (key in floats and is_number(v) and float32(v) is None
                    and not (isinstance(v, float) and not math.isfinite(v))):
                raise err(f"{what}: attribute '{key}' = {shown(v)} does not fit float32",
                          at.where(key))
            if key not in floats and is_int(v) and not INT32_MIN <= v <= INT32_MAX:
                raise err(f"{what}: attribute '{key}' = {shown(v)} does not fit int32",
                          at.where(key))
