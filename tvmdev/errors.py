"""The one error type every loader and planner raises."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters escaped (a name may
    hold any of them), so that an error stays one line."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


@dataclass(frozen=True)
class Where:
    """A place in an input file: a path and a 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


# A terminal control sequence: gcc -fdiagnostics-color=always colours with \x1b[...m and
# \x1b[K.
_CSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
LOG_INDENT = "    "


class TvmdevError(Exception):
    """Bad input: printed as ``tvmdev: file:line: message`` plus an optional hint.

    A tool's output that explains the error (a compiler's diagnostics) is its ``log``,
    printed under that line as lines of their own (:meth:`log_lines`). The CLI turns
    the error into exit code 1 without a traceback.
    """

    def __init__(self, message: str, where: Where | str | Path | None = None,
                 hint: str | None = None, log: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if isinstance(where, (str, Path)):
            where = Where(str(where))
        self.where = where
        self.hint = hint
        self.log = log

    def __str__(self) -> str:
        prefix = f"{self.where}: " if self.where is not None else ""
        return one_line(f"{prefix}{self.message}")

    def log_lines(self) -> list[str]:
        """The log as the lines to print under the error: each indented, with its tabs
        expanded, its colours dropped and any other control character escaped."""
        text = _CSI.sub("", self.log or "").strip("\n")
        if not text.strip():
            return []
        lines = (one_line(line.rstrip().expandtabs(8)) for line in text.splitlines())
        return [LOG_INDENT + line if line else "" for line in lines]


def log_excerpt(text: str, lines: int, tail: bool = False) -> str:
    """The first (or with ``tail`` the last) ``lines`` lines of a tool's output, with a
    line saying how many more there were."""
    all_lines = text.strip().splitlines()
    if len(all_lines) <= lines:
        return "\n".join(all_lines)
    more = f"... ({len(all_lines) - lines} more lines)"
    return "\n".join([more, *all_lines[-lines:]] if tail else [*all_lines[:lines], more])


class UsageError(Exception):
    """A command-line usage error: exit code 2."""


SHOWN_LIMIT = 60


def shown(value: object, limit: int = SHOWN_LIMIT) -> str:
    """``value`` as a message quotes it, like ``repr`` but cut to at most ``limit``
    characters. Nested lists and mappings are walked only as
    far as the text needs, so a huge or deeply shared value costs nothing to show."""
    if type(value) is str and len(value) < limit - 2:  # the common case (a name), fast
        text = repr(value)
        if len(text) <= limit:  # escapes can lengthen it
            return text
    parts: list[str] = []
    _shown(value, parts, limit + 1)
    text = "".join(parts)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown_count(n: int) -> str:
    """A count as a message says it (``{shown_count(n)} elements``): the number, or for
    one of more than 64 bits the power of two it reaches (``at least 2^154``)."""
    return str(n) if n.bit_length() <= 64 else f"at least 2^{n.bit_length() - 1}"


def cut(text: str, limit: int = SHOWN_LIMIT) -> str:
    """A string a message quotes as it is (a file name), cut to at most ``limit``
    characters."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(value: object, out: list[str], budget: int) -> int:
    """Append the text of ``value`` to ``out`` until ``budget`` characters are spent;
    the budget left."""
    if budget <= 0:
        return 0
    if isinstance(value, (list, tuple, dict)):
        items = list(value.items()) if isinstance(value, dict) else value
        opening, closing = ("{", "}") if isinstance(value, dict) else (
            ("[", "]") if isinstance(value, list) else ("(", ")"))
        out.append(opening)
        budget -= 1
        for i, item in enumerate(items):
            if budget <= 0:
                return 0
            if i:
                out.append(", ")
                budget -= 2
            if isinstance(value, dict):
                budget = _shown(item[0], out, budget)
                out.append(": ")
                budget = _shown(item[1], out, budget - 2)
            else:
                budget = _shown(item, out, budget)
        out.append(closing)
        return budget - 1
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        text = f"{'-' if value < 0 else ''}an integer of {value.bit_length()} bits"
    else:
        text = repr(value) if not isinstance(value, str) else repr(value[:budget + 2])
    out.append(text[:budget + 1])
    return budget - len(text)
