"""templates/, platforms/ and boards/ ship inside the wheel: install it into a fresh
virtual environment and generate a device from an empty folder elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, run_ok

pytestmark = pytest.mark.slow  # builds and installs a wheel


def test_wheel_installs_and_generates(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run_ok([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist),
            str(REPO)], timeout=600)
    wheel = next(dist.glob("tvmdev-*.whl"))
    with zipfile.ZipFile(wheel) as whl:  # the licence ships in the wheel's metadata
        (name,) = [n for n in whl.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert whl.read(name) == (REPO / "LICENSE").read_bytes()
    venv = tmp_path / "venv"
    # System site-packages provide the dependencies (no network needed); tvmdev itself
    # comes only from the wheel, which is checked below.
    run_ok([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = venv / "bin/python"
    run_ok([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
            str(wheel)], timeout=600)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    # A PYTHONPATH naming a checkout (PYTHONPATH=$PWD pytest) would shadow the wheel.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = run_ok([str(py), "-c", "import tvmdev.resources as r; print(r.data_root())"],
                   cwd=empty, env=env).stdout.strip()
    assert where.startswith(str(venv)), f"tvmdev was not imported from the wheel: {where}"
    proc = subprocess.run([str(venv / "bin/tvmdev"), "new-device", "woofles", "--platform",
                           "zephyr", "--platform", "cmsis", "-o", "out"], cwd=empty,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (empty / "out/src/device/woofles/zephyr.c").is_file()
    assert (empty / "out/include/tvm/device/woofles/cmsis.h").is_file()
    assert (empty / "out/src/portable/gemm.c").is_file()  # copied from the wheel's runtime/
    listing = run_ok([str(venv / "bin/tvmdev"), "list", "platforms"], cwd=empty,
                     env=env).stdout
    assert "zephyr" in listing and "posix" in listing
    # Boards (schema-checked at load) and the runtime sources ship too.
    boards = run_ok([str(venv / "bin/tvmdev"), "list", "boards"], cwd=empty, env=env).stdout
    assert "mps2_an385" in boards
    assert (Path(where) / "runtime/kernels/portable/gemm.c").is_file()
