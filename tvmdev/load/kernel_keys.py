"""The keys of a kernel in a kernel library (:mod:`.library`) that name things rather
than describe the call: ``calls``, ``buffer``, ``inplace`` and ``inplace_keep``."""

from __future__ import annotations

from typing import Any

from .. import naming
from ..errors import TvmdevError, shown
from ..model.ops import OpDef
from ..model.scratch import RULES
from . import yamlio
from .fields import name_in, optional


def names(item: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list of C identifiers (``calls``)."""
    value = optional(item, key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TvmdevError(f"{key} must be a list of C function names",
                          yamlio.where_of(item, key))
    for v in value:
        naming.check_identifier(v, key, yamlio.where_of(item, key))
    return tuple(value)


def inplace(item: dict[str, Any], opdef: OpDef, kname: str) -> tuple[int, ...]:
    """A kernel's ``inplace``: the inputs, by name, its output may be written over."""
    value = optional(item, "inplace", [])
    where = yamlio.where_of(item, "inplace")
    allowed = opdef.inputs[:-1] if opdef.variadic else opdef.inputs
    if not isinstance(value, list) or len(opdef.outputs) != 1 or any(
            not name_in(v, allowed) for v in value) or len(set(map(shown, value))) != len(value):
        raise TvmdevError(f"inplace of {kname} must list inputs of {opdef.name}, each once",
                          where, hint=(f"{opdef.name} has more than one output" if
                                       len(opdef.outputs) != 1 else
                                       "inputs: " + ", ".join(allowed)))
    return tuple(allowed.index(str(v)) for v in value)


def inplace_keep(item: dict[str, Any], opdef: OpDef, kname: str) -> str | None:
    """A kernel's ``inplace_keep``: a scratch rule for its op, or ``buffer``."""
    if "inplace_keep" not in item:
        return None
    value = item["inplace_keep"]
    rules = [r.name for r in RULES.values() if opdef.name in r.ops]
    ok = value in rules or (value == "buffer" and item.get("buffer") is not None)
    if not isinstance(value, str) or not ok or not item.get("inplace"):
        raise TvmdevError(f"inplace_keep of {kname} must be a scratch rule for {opdef.name} "
                          "or buffer, beside inplace", yamlio.where_of(item, "inplace_keep"),
                          hint="rules for " + opdef.name + ": " + (", ".join(rules) or "none")
                          + "; buffer needs a buffer:, and both need inplace: [...]")
    return value


def buffer(item: dict[str, Any]) -> str | None:
    """A kernel's ``buffer`` request (a word), if any."""
    value = optional(item, "buffer", None)
    if value is not None and (not isinstance(value, str) or not value.isidentifier()):
        raise TvmdevError(f"buffer must be a request name, not {shown(value)}",
                          yamlio.where_of(item, "buffer"))
    return value
