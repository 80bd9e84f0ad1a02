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


class TvmdevError(Exception):
    """Bad input: printed as ``tvmdev: file:line: message`` plus an optional hint.

    The CLI turns it into exit code 1 without a traceback.
    """

    def __init__(self, message: str, where: Where | str | Path | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if isinstance(where, (str, Path)):
            where = Where(str(where))
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        prefix = f"{self.where}: " if self.where is not None else ""
        return one_line(f"{prefix}{self.message}")


class UsageError(Exception):
    """A command-line usage error: exit code 2."""
