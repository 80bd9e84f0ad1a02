"""benchmarks/_tinyengine_peer.py, the TinyEngine peer of the memory and CMSIS-NN
benchmarks: the parts that need no TinyEngine tree (the generation, build and run are the
benchmarks', by hand)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import _tinyengine_build  # noqa: E402


def test_missing_trees_are_each_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TINYENGINE_SOURCE_DIR", "TVMDEV_TINYENGINE_CMSIS", "ZEPHYR_MODULES"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(_tinyengine_build.PeerUnavailable) as err:
        _tinyengine_build.trees()
    assert "TINYENGINE_SOURCE_DIR (a mit-han-lab/tinyengine checkout): not set" in str(err.value)
    assert "TVMDEV_TINYENGINE_CMSIS (an ARM-software/CMSIS_5 tree" in str(err.value)


def test_a_tree_without_its_marker_is_refused(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("TINYENGINE_SOURCE_DIR", str(tmp_path))
    with pytest.raises(_tinyengine_build.PeerUnavailable,
                       match=r"TINYENGINE_SOURCE_DIR .*has no code_generator/CodeGenerator.py"):
        _tinyengine_build.trees()


def test_a_generator_python_without_its_requirements_is_named(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A Python that lacks the generator's requirements (here: one that exits 1 on
    anything) is refused, with the command that makes one that has them."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TVMDEV_TINYENGINE_PYTHON", str(fake))
    with pytest.raises(_tinyengine_build.PeerUnavailable) as err:
        _tinyengine_build.generator_python()
    assert f"{fake} lacks one" in str(err.value)
    assert "pip install 'numpy<2' flatbuffers matplotlib tqdm" in str(err.value)


@pytest.mark.slow
def test_the_requirement_check_refuses_numpy_2() -> None:
    """The check the peer runs in the generator's Python fails under numpy 2 (TinyEngine's
    bias folding overflows int8 under its promotion rules) and passes under numpy 1."""
    import numpy

    got = subprocess.run([sys.executable, "-c", _tinyengine_build._CHECK.replace(
        "import numpy, flatbuffers, matplotlib, tqdm, sys",
        "import numpy, sys")], capture_output=True)
    assert (got.returncode == 0) == (int(numpy.__version__.split(".")[0]) < 2)
