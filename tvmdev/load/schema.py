"""JSON Schema validation of configuration files, with errors at ``file:line``.

Board and platform files are checked against the schemas in ``schemas/`` before they
are turned into dataclasses, so a typo anywhere (``run:``, ``support:``, ``memory:``,
``offload:``) is one clear line instead of a silently ignored key or a ``KeyError``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from ..errors import TvmdevError, Where
from .yamlio import where_of

_SCHEMAS = Path(__file__).resolve().parent / "schemas"
_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "a mapping",
               "null": "null"}


@cache
def _validator(name: str) -> Any:
    schema = json.loads((_SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema(name: str) -> dict[str, Any]:
    """The schema called ``name`` (``board``, ``platform``), as a dict."""
    return dict(_validator(name).schema)


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _node_where(doc: Any, path: Sequence[Any], fallback: Where) -> Where:
    """The line of the value at ``path``: the line of its key (or list item)."""
    node, where = doc, where_of(doc, None, fallback)
    for part in path:
        try:
            where = where_of(node, part, where)
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return where


def _describe(err: ValidationError, doc: Any, fallback: Where) -> TvmdevError:
    path = list(err.absolute_path)
    what = _dotted(path) or "the file"
    where = _node_where(doc, path, fallback)
    sch: dict[str, Any] = dict(err.schema) if isinstance(err.schema, dict) else {}
    props: dict[str, Any] = sch.get("properties", {})
    value: Any = err.validator_value
    instance: Any = err.instance
    if err.validator == "additionalProperties" and isinstance(instance, dict):
        extra = sorted(k for k in instance if k not in props)
        key = extra[0] if extra else "?"
        return TvmdevError(f"unknown key '{key}'" + (f" in {what}" if path else ""),
                           _node_where(doc, [*path, key], where),
                           hint="known keys: " + ", ".join(props))
    if err.validator == "required":
        missing = [k for k in value if k not in (instance or {})]
        return TvmdevError(f"{what} needs '{missing[0] if missing else '?'}'", where,
                           hint=str(sch.get("description", "")) or None)
    if err.validator == "type":
        names = [value] if isinstance(value, str) else list(value)
        got = type(instance).__name__.replace("str", "a string").replace(
            "list", "a list").replace("dict", "a mapping").replace("int", "an integer")
        return TvmdevError(f"{what} must be " + " or ".join(_TYPE_NAMES.get(n, n)
                                                           for n in names)
                           + f", not {got}", where)
    if err.validator in ("enum", "const"):
        allowed = value if err.validator == "enum" else [value]
        return TvmdevError(f"{what} is {json.dumps(instance)}; it must be one of "
                           + ", ".join(json.dumps(a) for a in allowed), where)
    if err.validator == "pattern":
        return TvmdevError(f"{what} {json.dumps(instance)} is not allowed here", where,
                           hint=str(sch.get("description", "")) or f"it must match {value}")
    message = err.message if len(err.message) <= 160 else err.message[:157] + "..."
    return TvmdevError(f"{what}: {message}", where)


def validate(doc: Any, name: str, file: str) -> None:
    """Check ``doc`` (as loaded by :mod:`yamlio`) against schema ``name``; the first
    problem is raised as a :class:`TvmdevError` at its line."""
    err = best_match(_validator(name).iter_errors(doc))
    if err is not None:
        raise _describe(err, doc, Where(file, 1))
