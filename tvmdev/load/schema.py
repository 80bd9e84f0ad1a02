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
from jsonschema.exceptions import ValidationError

from ..errors import TvmdevError, Where, cut
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


def _kind(value: Any) -> str:
    """What a YAML value is, in the words of the schema messages."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return json.dumps(value)
    for py, word in ((str, "a string"), (int, "an integer"), (float, "a number"),
                     (list, "a list"), (dict, "a mapping")):
        if isinstance(value, py):
            return word
    return type(value).__name__


def _show(value: Any) -> str:
    """A value as it is written in YAML: strings bare, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _given(value: Any) -> str:
    """A value from the file as a message quotes it: JSON, cut short."""
    return cut(json.dumps(value))


def _and(items: Sequence[str], last: str = "and") -> str:
    return items[0] if len(items) < 2 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _alternatives(err: ValidationError) -> str | None:
    """``needs 'a', or 'b' and 'c'`` when every alternative of an anyOf/oneOf only lists
    required keys; None otherwise."""
    subs: list[Any] = list(err.validator_value)  # type: ignore[arg-type]
    if not all(isinstance(s, dict) and set(s) == {"required"} for s in subs):
        return None
    have = set(err.instance) if isinstance(err.instance, dict) else set()
    if err.validator == "oneOf":
        both = [k for s in subs for k in s["required"] if k in have]
        if len(both) > 1:
            return "has " + _and([f"'{k}'" for k in both]) + "; give only one"
    groups = [_and([f"'{k}'" for k in s["required"]]) for s in subs]
    joint = ", or " if any(len(s["required"]) > 1 for s in subs) else " or "
    return "needs " + joint.join(groups)


def _condition_where(err: ValidationError, root: Any, doc: Any, where: Where) -> Where:
    """For a key required by an if/then (``method: west`` needs ...), the line of the
    value the condition tested; else ``where``."""
    schema_path = list(err.absolute_schema_path)
    if "then" not in schema_path:
        return where
    at = len(schema_path) - 1 - schema_path[::-1].index("then")
    node: Any = root
    for part in schema_path[:at]:
        node = node[part]
    # Below "then", each properties/<key> pair is one step into the instance.
    below = schema_path[at + 1:-1]
    if len(below) % 2 or any(p != "properties" for p in below[::2]):
        return where
    path = list(err.absolute_path)
    base = path[:len(path) - len(below) // 2]
    cond, tested = node["if"], []
    while len(cond.get("properties", {})) == 1:
        key = next(iter(cond["properties"]))
        tested.append(key)
        cond = cond["properties"][key]
    return _node_where(doc, [*base, *tested], where) if tested else where


def _describe(err: ValidationError, root: Any, doc: Any, fallback: Where,
              noun: str) -> TvmdevError:
    path = list(err.absolute_path)
    what = _dotted(path) or f"the {noun} file"
    where = _node_where(doc, path, fallback)
    sch: dict[str, Any] = dict(err.schema) if isinstance(err.schema, dict) else {}
    props: dict[str, Any] = sch.get("properties", {})
    about = str(sch.get("description", "")) or None
    value: Any = err.validator_value
    instance: Any = err.instance
    if err.validator == "additionalProperties" and isinstance(instance, dict):
        extra = sorted(k for k in instance if k not in props)
        key = extra[0] if extra else "?"
        return TvmdevError(f"unknown key '{key}'" + (f" in {what}" if path else ""),
                           _node_where(doc, [*path, key], where),
                           hint="known keys: " + ", ".join(props))
    if err.validator == "required":
        missing = [k for k in value if k not in (instance or {})][:1] or ["?"]
        key_about = props.get(missing[0], {}).get("description")
        return TvmdevError(f"{what} needs '{missing[0]}'", _condition_where(err, root, doc, where),
                           hint=about or (f"{missing[0]}: {key_about}" if key_about else None))
    if err.validator in ("anyOf", "oneOf") and (alternatives := _alternatives(err)):
        return TvmdevError(f"{what} {alternatives}", _condition_where(err, root, doc, where),
                           hint=about)
    if err.validator == "type":
        if not path and instance is None:
            return TvmdevError(f"the {noun} file is empty", where, hint=about)
        names = [value] if isinstance(value, str) else list(value)
        return TvmdevError(f"{what} must be " + " or ".join(_TYPE_NAMES.get(n, n)
                                                           for n in names)
                           + f", not {_kind(instance)}", where)
    if err.validator == "enum":
        return TvmdevError(f"{what} {_given(instance)} is not one of "
                           + ", ".join(_show(a) for a in value), where)
    if err.validator == "const":
        return TvmdevError(f"{what} must be {_show(value)}, not {_given(instance)}", where)
    if err.validator == "pattern":
        return TvmdevError(f"{what} {_given(instance)} must be "
                           + (about or f"text matching {value}"), where)
    bounds = {"minimum": "at least", "exclusiveMinimum": "more than",
              "maximum": "at most", "exclusiveMaximum": "less than"}
    if err.validator in bounds:
        return TvmdevError(f"{what} must be {bounds[err.validator]} {_show(value)}, "
                           f"not {_given(instance)}", where)
    if err.validator in ("minLength", "minItems") and value == 1:
        return TvmdevError(f"{what} must not be empty", where)
    if err.validator == "uniqueItems":
        return TvmdevError(f"{what} lists an item twice", where)
    message = err.message if len(err.message) <= 160 else err.message[:157] + "..."
    return TvmdevError(f"{what}: {message}", where)


# Which problem to report when there are several: a typo first (it often causes the
# others), then a value of the wrong type, a wrong value, and a missing key last; ties
# go to the earliest line.
_RANK = {"additionalProperties": 0, "type": 1, "required": 3, "anyOf": 3, "oneOf": 3}


def validate(doc: Any, name: str, file: str) -> None:
    """Check ``doc`` (as loaded by :mod:`yamlio`) against schema ``name``; the first
    problem is raised as a :class:`TvmdevError` at its line."""
    fallback = Where(file, 1)
    errors = list(_validator(name).iter_errors(doc))
    if errors:
        err = min(errors, key=lambda e: (_RANK.get(str(e.validator), 2),
                                         _node_where(doc, list(e.absolute_path),
                                                     fallback).line,
                                         _dotted(list(e.absolute_path))))
        raise _describe(err, _validator(name).schema, doc, fallback, name)
