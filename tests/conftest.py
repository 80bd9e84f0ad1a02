"""Shared fixtures: running the CLI in-process, and the toolchain policy.

A missing toolchain skips a test on a developer's machine, saying why; under CI
(CI=true) it fails the run instead, because CI is meant to have every toolchain.
Trees that cannot be installed from a package registry (KleidiAI, Zephyr) always skip
when absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tvmdev.cli import main

REPO = Path(__file__).resolve().parent.parent
GOLDENS = Path(__file__).resolve().parent / "goldens"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/goldens from the current generator")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> Callable[..., Result]:
    """Run ``tvmdev ARGS`` in-process (optionally in ``cwd``) and capture its output."""
    def run(*args: str, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)
    return run


def need_tool(name: str, why: str = "") -> str:
    """The path of a required program: skip without it, fail without it under CI."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} is not installed{': ' + why if why else ''}"
    if IN_CI:
        pytest.fail(f"{message} (CI must have it: .ci/run installs it)")
    pytest.skip(message)


def need_module(name: str, install: str) -> None:
    """A required Python package: skip without it, fail without it under CI (which
    installs .[test])."""
    import importlib.util
    if importlib.util.find_spec(name) is not None:
        return
    message = f"the {name} package is not installed: {install}"
    if IN_CI:
        pytest.fail(f"{message} (CI must have it: .ci/run installs .[test])")
    pytest.skip(message, allow_module_level=True)


@pytest.fixture
def tflite_model() -> Callable[[str], Path]:
    """The path of a fetched real model (tests/models.py): skip without it, fail without
    it under CI."""
    from models import MODELS, cache_dir, model_path

    def find(name: str) -> Path:
        assert name in MODELS, f"{name} is not in tests/models.py MODELS"
        path = model_path(name)
        if path is not None:
            return path
        message = (f"{name} has not been fetched into {cache_dir()}: run "
                   f"python3 tests/models.py (scripts/test.sh does)")
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return find


def run_ok(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure show its output in the assertion."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, (f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
                                  f"{proc.stdout}\n{proc.stderr}")
    return proc  # type: ignore[no-any-return]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


# numpy batch broadcasting in matmul: whole batches, dims of 1 broadcast on either side,
# 1-D operands, constants as B (b_constant), on a device and not.
MATMUL_BROADCAST_MODEL = """\
name: bmm
devices:
  npu0: {kind: woofles}
inputs:
  a: {shape: [3, 1, 3, 4], dtype: float32}
  b: {shape: [1, 2, 4, 2], dtype: float32}
  r: {shape: [2, 1, 5], dtype: float32}
  v: {shape: [5], dtype: float32}
  s: {shape: [1, 2, 3], dtype: float32}
  x: {shape: [2, 6, 4], dtype: float32}
outputs:
  y1: {shape: [3, 2, 3, 2], dtype: float32}
  y2: {shape: [2, 1], dtype: float32}
  y3: {shape: [2, 3], dtype: float32}
  y4: {shape: [4, 1, 2, 2], dtype: float32}
  y5: {shape: [2, 6, 3], dtype: float32}
  y6: {shape: [12, 3], dtype: float32}
constants:
  c: {shape: [2, 5, 3], dtype: float32, random: {seed: 3, low: -1, high: 1}}
  t: {shape: [4, 1, 3, 2], dtype: float32, random: {seed: 4, low: -1, high: 1}}
  w: {shape: [4, 3], dtype: float32, random: {seed: 5, low: -1, high: 1}}
operators:
  - {name: mm1, op: matmul, inputs: [a, b], outputs: [y1], device: npu0}
  - {name: mm2, op: matmul, inputs: [r, v], outputs: [y2]}
  - {name: mm3, op: matmul, inputs: [v, c], outputs: [y3], device: npu0}
  - {name: mm4, op: matmul, inputs: [s, t], outputs: [y4]}
  - {name: mm5, op: matmul, inputs: [x, w], outputs: [y5]}
  - {name: rows, op: reshape, inputs: [x], outputs: [x2], attrs: {shape: [-1, 4]}}
  - {name: mm6, op: matmul, inputs: [x2, w], outputs: [y6]}
"""
