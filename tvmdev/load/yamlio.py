"""YAML (and JSON) loading that keeps line numbers and rejects duplicate keys.

Mappings load as :class:`LineDict` and sequences as :class:`LineList`; both know
the line each key or item came from, so every later error can point at it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import TvmdevError, Where


class LineDict(dict[str, Any]):
    """A dict that remembers the file, its own line and the line of each key."""

    file: str = ""
    line: int = 0
    key_lines: dict[str, int]

    def where(self, key: str | None = None) -> Where:
        """The place of ``key`` (or of the mapping itself)."""
        if key is not None and key in self.key_lines:
            return Where(self.file, self.key_lines[key])
        return Where(self.file, self.line)


class LineList(list[Any]):
    """A list that remembers the file, its own line and the line of each item."""

    file: str = ""
    line: int = 0
    item_lines: list[int]

    def where(self, index: int | None = None) -> Where:
        """The place of item ``index`` (or of the sequence itself)."""
        if index is not None and 0 <= index < len(self.item_lines):
            return Where(self.file, self.item_lines[index])
        return Where(self.file, self.line)


def wrap(data: Any, file: str) -> Any:
    """Plain data (dicts, lists, scalars) as the loader's mappings and sequences, every
    place being ``file`` itself (a model a front end made, which has no lines)."""
    if isinstance(data, dict):
        d = LineDict((str(k), wrap(v, file)) for k, v in data.items())
        d.file, d.key_lines = file, {}
        return d
    if isinstance(data, (list, tuple)):
        seq = LineList(wrap(v, file) for v in data)
        seq.file, seq.item_lines = file, []
        return seq
    return data


# libyaml's parser when PyYAML was built with it: the same nodes and marks, much faster.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _make_loader(file: str) -> Any:
    class Loader(_BASE):  # type: ignore[misc]
        pass

    def construct_mapping(loader: Any, node: yaml.MappingNode) -> LineDict:
        loader.flatten_mapping(node)
        result = LineDict()
        result.file = file
        result.line = node.start_mark.line + 1
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise TvmdevError("mapping keys must be scalars",
                                  Where(file, key_node.start_mark.line + 1))
            skey = str(key) if not isinstance(key, str) else key
            line = key_node.start_mark.line + 1
            if skey in result.key_lines:
                raise TvmdevError(
                    f"duplicate key '{skey}' (first defined at line {result.key_lines[skey]})",
                    Where(file, line), hint="each key may appear once in a mapping")
            result.key_lines[skey] = line
            result[skey] = loader.construct_object(value_node, deep=True)
        return result

    def construct_sequence(loader: Any, node: yaml.SequenceNode) -> LineList:
        result = LineList(loader.construct_object(child, deep=True) for child in node.value)
        result.file = file
        result.line = node.start_mark.line + 1
        result.item_lines = [child.start_mark.line + 1 for child in node.value]
        return result

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    return Loader


def loads(text: str, file: str) -> Any:
    """Parse YAML (a superset of JSON) text, keeping lines; errors carry ``file:line``."""
    try:
        return yaml.load(text, Loader=_make_loader(file))  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = exc.problem or exc.context or "malformed YAML"
        raise TvmdevError(f"invalid YAML: {problem}", Where(file, line),
                          hint="check indentation, quoting and brackets") from None
    except yaml.YAMLError as exc:
        raise TvmdevError(f"invalid YAML: {exc}", Where(file)) from None


def load(path: Path) -> Any:
    """Read and parse a YAML or JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TvmdevError("no such file", Where(str(path))) from None
    except IsADirectoryError:
        raise TvmdevError("is a directory, expected a file", Where(str(path))) from None
    except UnicodeDecodeError:
        raise TvmdevError("not UTF-8 text", Where(str(path))) from None
    return loads(text, str(path))


def where_of(node: Any, key: str | int | None = None, default: Where | None = None) -> Where:
    """The place of ``node[key]`` when ``node`` came from :func:`load`."""
    if isinstance(node, LineDict):
        return node.where(key if isinstance(key, str) else None)
    if isinstance(node, LineList):
        return node.where(key if isinstance(key, int) else None)
    return default if default is not None else Where("<input>")
