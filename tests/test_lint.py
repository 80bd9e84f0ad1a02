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


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_modules_and_functions_stay_small() -> None:
    """No module over 400 lines and no function over 60 (complexity is ruff's C901)."""
    import ast

    too_long = []
    for path in sorted((REPO / "tvmdev").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    too_long.append(f"{rel}:{node.lineno}: {node.name} has {n} lines")
    assert too_long == []


def test_pipeline_stages_import_downstream_only() -> None:
    """Data flows one way: a stage imports only the stages before it (cli wires them
    together; errors, naming and resources are shared by all). A run reads the firmware
    it built through inspect (its stack use); inspect never imports run."""
    import ast

    order = ["model", "load", "plan", "render", "write", "run", "inspect", "frontends", "cli"]
    allowed = {
        "model": set(), "load": {"model"}, "plan": {"model", "load"},
        "render": {"model", "load", "plan", "write"}, "write": set(),
        "run": {"model", "load", "plan", "render", "write", "inspect"},
        "inspect": {"model", "load", "write"},
        "frontends": {"model", "load"}, "cli": set(order),
    }
    wrong = []
    for stage in order:
        for path in sorted((REPO / "tvmdev" / stage).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module:
                    target = node.module.split(".")[0]
                    if target in order and target != stage and target not in allowed[stage]:
                        wrong.append(f"{path.relative_to(REPO)}: imports {target}")
    assert wrong == []
