"""YAML (and JSON) loading that keeps line numbers and rejects duplicate keys.

Mappings load as :class:`LineDict` and sequences as :class:`LineList`; both know
the line each key or item came from, so every later error can point at it.

Hostile documents are refused before they cost anything: nesting deeper than
:data:`MAX_DEPTH` (checked on the parser's events, before libyaml's recursive composer
sees them), aliases that expand past :data:`MAX_ALIAS_NODES` nodes (a billion laughs),
and integers of more than 64 bits.

Every refusal is one :class:`~tvmdev.errors.TvmdevError` at ``file:line``, whoever
stops the document: libyaml 0.2.5 and later (in PyYAML 6.0.4's wheels) has a nesting
limit of its own (1000 flow levels), which its scanner may reach while it reads ahead,
before the parser gives :func:`_check_depth` one event; its error is then reported as
invalid YAML at its line, like any other the library raises.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import TvmdevError, Where, shown
from ..reading import read_text

MAX_DEPTH = 64  # nested mappings and lists
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add to a document
_INT_TEXT = 4000  # characters of an integer's text read at all
# The column after a line's indentation and block indicators ("- ", "? ", ": "): block
# collections nest only by starting at a larger column (or, for a sequence in a mapping,
# at the same one), so a document whose columns stay small cannot nest deeply in blocks.
_BLOCK_START = re.compile(r"^(?:[ \t]|[-?:](?=[ \t]|$))*", re.M)
_FLOW_CHARS = re.compile(r"[\[\]{}'\"#\n]")


def _flow_bound(text: str) -> int | None:
    """The deepest flow nesting any line reaches, when every line with brackets closes
    them all and has no quote or comment: then each line starts outside flow context, no
    bracket on it can be text (plain scalars inside brackets cannot hold brackets), and
    its brackets' running count bounds its nesting. None when a line breaks that rule."""
    deepest = depth = 0
    brackets = unsure = False
    for m in _FLOW_CHARS.finditer(text + "\n"):
        c = m.group()
        if c == "\n":
            if depth or (brackets and unsure):
                return None
            brackets = unsure = False
        elif c in "'\"#":
            unsure = True
        else:
            brackets = True
            depth += 1 if c in "[{" else -1
            if depth < 0:
                return None
            deepest = max(deepest, depth)
    return deepest


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
                    f"duplicate key {shown(skey)} (first defined at line {result.key_lines[skey]})",
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

    def construct_int(loader: Any, node: yaml.ScalarNode) -> int:
        # Python converts at most 4300 digits: a longer integer is too large anyway.
        value = None if len(node.value) > _INT_TEXT else loader.construct_yaml_int(node)
        if value is None or not -(2**63) <= value < 2**63:
            raise TvmdevError(f"integer {shown(node.value)} is too large (tvmdev reads "
                              "integers of at most 64 bits)", Where(file, node.start_mark.line + 1))
        return int(value)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    return Loader


def _check_depth(text: str, file: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before anything recursive reads the text.

    A cheap bound first: block nesting is at most twice the largest starting column, flow
    nesting at most what :func:`_flow_bound` finds. Only a document past that bound (or
    whose lines it cannot vouch for) has its events counted (libyaml's parser is not
    recursive; its composer is)."""
    column = max((len(m) for m in _BLOCK_START.findall(text)), default=0)
    flow = _flow_bound(text)
    if flow is not None and 2 * (column + 1) + flow <= MAX_DEPTH:
        return
    depth = 0
    for event in yaml.parse(text, Loader=_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise TvmdevError(f"nested more than {MAX_DEPTH} levels deep", Where(file, line),
                                  hint="a model, board or library nests a few levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_aliases(root: yaml.Node, file: str) -> None:
    """Refuse aliases that expand the document by more than MAX_ALIAS_NODES nodes."""
    sizes: dict[int, int] = {}
    shared: list[yaml.Node] = []

    def size(node: yaml.Node) -> int:  # depth is bounded by MAX_DEPTH
        if id(node) in sizes:
            shared.append(node)
            return sizes[id(node)]
        sizes[id(node)] = 1  # a recursive alias counts once
        children: list[Any] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        total = 1 + sum(size(c) for c in children)
        sizes[id(node)] = min(total, 2**62)
        return sizes[id(node)]

    if size(root) > len(sizes) + MAX_ALIAS_NODES:
        first = min((n for n in shared if sizes[id(n)] > 1),
                    key=lambda n: n.start_mark.index, default=root)
        raise TvmdevError(f"aliases expand the document past {MAX_ALIAS_NODES} nodes",
                          Where(file, first.start_mark.line + 1),
                          hint="write the values out, or alias fewer and smaller ones")


def _compose_and_construct(text: str, file: str) -> Any:
    _check_depth(text, file)
    loader = _make_loader(file)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no anchor, no alias
            _check_aliases(node, file)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def loads(text: str, file: str) -> Any:
    """Parse YAML (a superset of JSON) text, keeping lines; errors carry ``file:line``."""
    try:
        return _compose_and_construct(text, file)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = exc.problem or exc.context or "malformed YAML"
        raise TvmdevError(f"invalid YAML: {problem}", Where(file, line),
                          hint="check indentation, quoting and brackets") from None
    except yaml.YAMLError as exc:
        raise TvmdevError(f"invalid YAML: {exc}", Where(file)) from None


def load(path: Path) -> Any:
    """Read and parse a YAML or JSON file (a regular file of at most 256 MiB)."""
    return loads(read_text(path), str(path))


def where_of(node: Any, key: str | int | None = None, default: Where | None = None) -> Where:
    """The place of ``node[key]`` when ``node`` came from :func:`load`."""
    if isinstance(node, LineDict):
        return node.where(key if isinstance(key, str) else None)
    if isinstance(node, LineList):
        return node.where(key if isinstance(key, int) else None)
    return default if default is not None else Where("<input>")
