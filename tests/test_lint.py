"""The package stays clean under mypy --strict and ruff (configured in pyproject.toml)."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO, need_tool, run_ok


@pytest.mark.slow
def test_mypy_strict() -> None:
    need_tool("mypy", "pip install -e .[test]")
    run_ok([sys.executable, "-m", "mypy"], cwd=REPO, timeout=600)


def test_ruff() -> None:
    need_tool("ruff", "pip install -e .[test]")
    run_ok(["ruff", "check", "tvmdev", "tests", "benchmarks"], cwd=REPO)
