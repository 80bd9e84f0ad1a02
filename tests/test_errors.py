"""How an error is printed: ``tvmdev: file:line: message`` on one line, the tool output
it carries (a compiler's log) below it as real lines, indented, then the hint.
(tests/test_run_host.py checks a real gcc failure the same way.)"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import NoReturn

import pytest
from conftest import Result

from tvmdev.errors import TvmdevError, log_excerpt

LOG = ("m.c: In function 'f':\n"
       "m.c:3:5: error: 'x' undeclared\n"
       "\x1b[01;31m\x1b[Kerror\x1b[m\x1b[K: red\n"
       "\n"
       "\treturn x;\r\n"
       "bell \x07 here\n")


def test_log_lines() -> None:
    e = TvmdevError("the build failed (gcc exited 1)", "b", log=LOG)
    assert str(e) == "b: the build failed (gcc exited 1)"
    assert e.log_lines() == [
        "    m.c: In function 'f':",
        "    m.c:3:5: error: 'x' undeclared",
        "    error: red",  # gcc -fdiagnostics-color=always: its control sequences dropped
        "",
        "            return x;",  # the tab expanded to 8 columns, the \r dropped
        "    bell \\x07 here",  # any other control character escaped
    ]
    assert TvmdevError("no log").log_lines() == []
    assert TvmdevError("blank log", log="\n \n").log_lines() == []


def test_log_excerpt() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 11)) + "\n"
    assert log_excerpt(text, 10) == text.strip()
    assert log_excerpt(text, 3).splitlines() == ["line 1", "line 2", "line 3",
                                                 "... (7 more lines)"]
    assert log_excerpt(text, 2, tail=True).splitlines() == ["... (8 more lines)", "line 9",
                                                            "line 10"]


def test_the_cli_prints_the_log_under_the_error(cli: Callable[..., Result],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(_args: object) -> NoReturn:
        raise TvmdevError("the build failed (gcc exited 1)", "b", hint="see build.cmd",
                          log="m.c:1:1: error: one\nm.c:2:1: error: two\n")

    # tvmdev.cli exports main(), which hides its module of that name
    monkeypatch.setattr(importlib.import_module("tvmdev.cli.main"), "cmd_list", failing)
    r = cli("list", "boards")
    assert (r.code, r.out) == (1, "")
    assert r.err.splitlines() == ["tvmdev: b: the build failed (gcc exited 1)",
                                  "    m.c:1:1: error: one",
                                  "    m.c:2:1: error: two",
                                  "  hint: see build.cmd"]
