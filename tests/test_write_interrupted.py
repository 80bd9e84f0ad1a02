"""Writes that survive interruption: strace kills a real tvmdev run at each rename of its
commit (``-e inject=rename:signal=SIGKILL:when=N``, for every N), then the same command,
run again, must finish with exactly the folder an uninterrupted run makes (byte for
byte, the manifest too), no temporary file left, and the user's edits kept."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, tree

from tvmdev.write import journal

pytestmark = pytest.mark.slow

# No bytecode writes: Python renames .pyc files into place, which would move the count.
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
SCAFFOLD = "src/device/woofles/posix.c"
HEADER = "include/tvm/device/woofles/posix.h"
MINE = "/* mine: the user's accelerator code */\n"
Cli = Callable[..., Result]

MODEL = (REPO / "examples/mlp/mlp.yaml").read_text().replace(
    "npy: w1.npy", "random: {seed: 1, low: -1, high: 1}")
# The model changed: another seed, and a sigmoid (a kernel the first did not need).
MODEL_CHANGED = MODEL.replace("seed: 7", "seed: 8").replace(
    "outputs: [h2], attrs: {alpha: 0.5}, device: npu1}",
    "outputs: [h2], attrs: {alpha: 0.5}, device: npu1}\n"
    "  - {name: squash, op: sigmoid, inputs: [h2], outputs: [h3]}").replace(
    "inputs: [h2], outputs: [y]", "inputs: [h3], outputs: [y]")


def _edit(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _fresh(cli: Cli, root: Path) -> list[str]:
    (root / "out").mkdir(parents=True)
    return ["new-device", "woofles", "--platform", "zephyr", "--zephyr-driver", "-o", "out"]


def _add_platform(cli: Cli, root: Path) -> list[str]:
    root.mkdir()
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=root).code == 0
    assert cli("new-device", "uart_accel", "--platform", "cmsis", "-o", "out",
               cwd=root).code == 0
    _edit(root / "out" / SCAFFOLD, MINE)
    _edit(root / "out" / HEADER, "/* an edit --force saves as .orig */\n")
    return ["new-device", "woofles", "--platform", "posix", "--platform", "zephyr",
            "--ops", "gemm,matmul,relu", "-o", "out", "--force"]


def _model_changed(cli: Cli, root: Path) -> list[str]:
    root.mkdir()
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=root).code == 0
    _edit(root / "out" / SCAFFOLD, MINE)
    (root / "model.yaml").write_text(MODEL)
    assert cli("aot", "model.yaml", "-o", "out", cwd=root).code == 0
    (root / "model.yaml").write_text(MODEL_CHANGED)
    return ["aot", "model.yaml", "-o", "out"]


SCENARIOS: dict[str, Callable[[Cli, Path], list[str]]] = {
    "fresh new-device": _fresh, "add a platform": _add_platform,
    "aot after a model change": _model_changed}


def _strace(strace: str, args: list[str], cwd: Path, *options: str
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([strace, "-f", "-qq", *options, sys.executable, "-m", "tvmdev",
                           *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=120)


def _count_renames(strace: str, args: list[str], cwd: Path) -> tuple[str, int]:
    """The rename system call os.replace makes on this machine, and how many of them
    an uninterrupted run of ``args`` makes."""
    log = cwd.parent / f"{cwd.name}.strace"
    proc = _strace(strace, args, cwd, "-o", str(log), "-e", "trace=rename,renameat,renameat2")
    assert proc.returncode == 0, proc.stderr
    calls = re.findall(r"^\d+\s+(rename\w*)\(", log.read_text(), flags=re.M)
    assert len(set(calls)) == 1, f"renames by more than one system call: {set(calls)}"
    return calls[0], len(calls)


def _killed(strace: str, syscall: str, n: int, args: list[str], cwd: Path,
            sig: str = "SIGKILL") -> subprocess.CompletedProcess[str]:
    return _strace(strace, args, cwd, "-o", os.devnull, "-e", f"trace={syscall}",
                   "-e", f"inject={syscall}:signal={sig}:when={n}")


def _check(root: Path, want: dict[str, bytes], edited: bool, what: str) -> None:
    got = tree(root / "out")
    assert sorted(got) == sorted(want), f"{what}: files differ"
    assert [p for p in want if got[p] != want[p]] == [], f"{what}: contents differ"
    assert not [p for p in got if p.endswith(".tmp") or journal.STAGING in p], what
    if edited:
        assert (root / "out" / SCAFFOLD).read_text().endswith(MINE), what


def _reference(cli: Cli, tmp_path: Path, scenario: str
               ) -> tuple[Path, list[str], dict[str, bytes]]:
    """A copy of the folder before the command (``base``), the command, and the folder
    an uninterrupted run of it makes."""
    base = tmp_path / "base"
    command = SCENARIOS[scenario](cli, base)
    shutil.copytree(base, tmp_path / "ref")
    assert cli(*command, cwd=tmp_path / "ref").code == 0
    return base, command, tree(tmp_path / "ref/out")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_killed_at_every_rename(scenario: str, cli: Cli, tmp_path: Path) -> None:
    strace = need_tool("strace", "apt-get install strace")
    base, command, want = _reference(cli, tmp_path, scenario)
    edited = scenario != "fresh new-device"
    shutil.copytree(base, tmp_path / "count")
    syscall, renames = _count_renames(strace, command, tmp_path / "count")
    _check(tmp_path / "count", want, edited, "the run under strace")
    forward = 0
    for n in range(1, renames + 1):
        root = tmp_path / f"kill{n}"
        shutil.copytree(base, root)
        proc = _killed(strace, syscall, n, command, root)
        assert proc.returncode == -signal.SIGKILL, f"rename {n}/{renames}: not killed"
        forward += journal.pending(root / "out")
        r = cli(*command, cwd=root)
        assert r.code == 0, f"rename {n}/{renames}: {r.err}"
        _check(root, want, edited, f"killed at rename {n}/{renames}")
        shutil.rmtree(root)
    # Killed at the journal's rename, a run has renamed nothing (rolled back); killed at
    # any later one, it leaves a journal that the next run completes (rolled forward).
    assert renames >= 5 and forward == renames - 1


def test_killed_again_at_every_rename_of_the_recovery(cli: Cli, tmp_path: Path) -> None:
    """A recovery killed in its turn is completed by the run after it: each run below
    completes one rename of the first run's commit, then is killed at the next."""
    strace = need_tool("strace", "apt-get install strace")
    base, command, want = _reference(cli, tmp_path, "add a platform")
    syscall, renames = _count_renames(strace, command, shutil.copytree(base, tmp_path / "c"))
    root = shutil.copytree(base, tmp_path / "kill")
    assert _killed(strace, syscall, 2, command, root).returncode == -signal.SIGKILL
    runs = []
    for _ in range(renames):
        proc = _killed(strace, syscall, 2, command, root)
        runs.append(proc.returncode)
        if proc.returncode == 0:
            break
    assert runs == [-signal.SIGKILL] * (renames - 2) + [0]
    _check(root, want, True, "after the recovery was killed at each rename")
    r = cli(*command, cwd=root)
    assert r.code == 0 and all(line.startswith("unchanged") or "kept (yours)" in line
                               for line in r.out.splitlines()), r.out


def test_ctrl_c_at_every_rename(cli: Cli, tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) raises KeyboardInterrupt after the rename it arrives at: exit 130,
    and the next run completes the write."""
    strace = need_tool("strace", "apt-get install strace")
    base, command, want = _reference(cli, tmp_path, "aot after a model change")
    syscall, renames = _count_renames(strace, command, shutil.copytree(base, tmp_path / "c"))
    for n in range(1, renames + 1):
        root = shutil.copytree(base, tmp_path / f"int{n}")
        proc = _killed(strace, syscall, n, command, root, sig="SIGINT")
        assert proc.returncode == 130, f"rename {n}/{renames}: {proc.returncode}"
        assert cli(*command, cwd=root).code == 0
        _check(root, want, True, f"Ctrl-C at rename {n}/{renames}")
