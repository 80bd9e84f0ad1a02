"""What firmware on an RTOS (``tvmdev run --rtos --threads N``) says of each thread: its
runs, its results that differ from its first (or from thread 0's), and through the
simulated devices its Activate/Deactivate and Open/Close and its operators on a device not
open or not active. A thread is sound when those balance and the rest are zero."""

from __future__ import annotations

import re

_LINE = re.compile(r"^tvmdev: thread (\d+) (.*)$", re.M)


def thread_counts(stdout: str) -> dict[int, dict[str, int]]:
    """Each thread's counters, as printed."""
    return {int(m[1]): {k: int(v) for k, v in (p.split("=") for p in m[2].split())}
            for m in _LINE.finditer(stdout)}


def unsound(counts: dict[str, int]) -> list[str]:
    """What is wrong with one thread's counters (nothing: an empty list)."""
    bad = []
    if counts.get("differing", 0):
        bad.append(f"{counts['differing']} results differ")
    if counts.get("open", 0) != counts.get("close", 0):
        bad.append("open/close do not balance")
    if counts.get("activate", 0) != counts.get("deactivate", 0):
        bad.append("activate/deactivate do not balance")
    if counts.get("violations", 0):
        bad.append(f"{counts['violations']} operators on a device not open or not active")
    return bad


def thread_lines(stdout: str) -> list[str]:
    """One report line per thread."""
    lines = []
    for n, c in sorted(thread_counts(stdout).items()):
        calls = (f", activate {c['activate']} / deactivate {c['deactivate']}, open "
                 f"{c['open']} / close {c['close']}" if "open" in c else "")
        if "operator" in c:  # the simulated devices'
            calls += (f", operators {c['operator']}, on an unheld or inactive device "
                      f"{c['violations']}")
        verdict = "; ".join(unsound(c)) or "sound"
        lines.append(f"thread {n}: runs {c['runs']}, results differing {c['differing']}"
                     f"{calls}: {verdict}")
    return lines


def unsound_threads(stdout: str) -> list[int]:
    """The threads whose counters are not sound."""
    return [n for n, c in sorted(thread_counts(stdout).items()) if unsound(c)]
