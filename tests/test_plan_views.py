"""reshape and flatten are views: an output that aliases its input's buffer when the
input dies there (no copy, no second buffer), checked in the plan, in the arena's size
and in a run's results."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.load.model import load_model
from tvmdev.model import ops, reference
from tvmdev.plan.memory import plan_memory
from tvmdev.run.compare import ATOL, RTOL

VIEWS_MODEL = """\
name: views
inputs:
  x: {shape: [64, 64], dtype: float32}
outputs:
  y: {shape: [128, 32], dtype: float32}
  z: {shape: [4, 1024], dtype: float32}
operators:
  - {name: t1, op: transpose, inputs: [x], outputs: [a]}
  - {name: r1, op: reshape, inputs: [a], outputs: [b], attrs: {shape: [32, 128]}}
  - {name: t2, op: transpose, inputs: [b], outputs: [y]}
  - {name: t3, op: transpose, inputs: [x], outputs: [c]}
  - {name: r2, op: reshape, inputs: [c], outputs: [d], attrs: {shape: [4, 16, 64]}}
  - {name: f1, op: flatten, inputs: [d], outputs: [z]}
"""


def test_reshape_and_flatten_alias_their_input(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "views.yaml"
    path.write_text(VIEWS_MODEL)
    m = load_model(path)
    plan = plan_memory(m)
    # b is a's buffer; d is c's. f1 writes a model output: a copy, as it must be.
    assert ("b", "a") in plan.inplace and ("d", "c") in plan.inplace
    assert plan.offsets["b"] == plan.offsets["a"] and plan.offsets["d"] == plan.offsets["c"]
    assert plan.arena_size == 64 * 64 * 4
    # Were reshape a copy, a and b would both be live at r1: twice the arena.
    for name in ("reshape", "flatten"):
        monkeypatch.setitem(ops.OPS, name, dataclasses.replace(ops.OPS[name], view=False))
    copies = plan_memory(m)
    assert ("b", "a") not in copies.inplace
    assert copies.arena_size == 2 * plan.arena_size


@pytest.mark.slow
def test_views_run_and_match_the_reference(cli: Callable[..., Result], tmp_path: Path
                                           ) -> None:
    need_tool("gcc")
    path = tmp_path / "views.yaml"
    path.write_text(VIEWS_MODEL)
    r = cli("run", str(path), "--build-dir", str(tmp_path / "b"), "--save-outputs",
            str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    m = load_model(path)
    x = reference.random_inputs(m)["x"].astype(np.float64)
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), x.T.reshape(32, 128).T,
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(np.load(tmp_path / "out/z.npy"), x.T.reshape(4, 1024),
                               rtol=RTOL, atol=ATOL)
