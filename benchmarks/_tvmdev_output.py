"""What the benchmark scripts read from a failing ``tvmdev`` command's output.

API::

    first_error(output, width=None) -> str   # the line that says why it failed
"""

from __future__ import annotations

# The lines that say why a run failed: tvmdev's one-line errors, the harness's verdict.
WHY = ("tvmdev:", "FAIL")


def first_error(output: str, width: int | None = None) -> str:
    """The first line a failing ``tvmdev`` command printed about why (``tvmdev: ...`` or
    the harness's ``FAIL ...``), else its last line; cut to ``width`` characters (an
    ellipsis at the end) when given."""
    lines = output.strip().splitlines()
    line = next((ln for ln in lines if ln.startswith(WHY)), lines[-1] if lines else "?")
    if width is not None and len(line) > width:
        return line[:width - 3] + "..."
    return line
