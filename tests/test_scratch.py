"""Kernel scratch end to end: a model whose gemm and matmul are large, planned, built and
run on the host and on the emulated Cortex-M3 against the numpy reference, with the
scratch the board's tuning gives each call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, need_tool

from tvmdev.load.board import board_by_name
from tvmdev.model.scratch import gemm_pack

pytestmark = pytest.mark.slow  # builds and runs programs and firmware

# 12 rows, so A is several slivers on every tuning and more than one strip of B pays;
# K = 300 is several K blocks, N = 200 more columns of B than 4 KiB of scratch holds.
BIG = """\
name: big
inputs:
  x: {shape: [12, 300], dtype: float32}
outputs:
  y: {shape: [2, 6, 24], dtype: float32}
constants:
  w1: {shape: [300, 200], dtype: float32, random: {seed: 1, low: -0.1, high: 0.1}}
  b1: {shape: [200], dtype: float32, random: {seed: 2, low: -0.1, high: 0.1}}
  w2: {shape: [40, 200], dtype: float32, random: {seed: 3, low: -0.1, high: 0.1}}
  w3: {shape: [40, 24], dtype: float32, random: {seed: 4, low: -0.5, high: 0.5}}
operators:
  - {name: fc1, op: gemm, inputs: [x, w1, b1], outputs: [h1]}
  - {name: act, op: relu, inputs: [h1], outputs: [a1]}
  - {name: fc2, op: gemm, inputs: [a1, w2], outputs: [h2], attrs: {transB: 1, alpha: 0.5}}
  - {name: split, op: reshape, inputs: [h2], outputs: [h3], attrs: {shape: [2, 6, 40]}}
  - {name: mm, op: matmul, inputs: [h3, w3], outputs: [y]}
"""

SHAPES = {"fc1": (12, 200, 300), "fc2": (12, 40, 200), "mm": (6, 24, 40)}


@pytest.mark.parametrize("board", ["host", "mps2_an385"])
def test_large_gemm_and_matmul_run_with_planned_scratch(board: str, cli: Callable[..., Result],
                                                         tmp_path: Path) -> None:
    b = board_by_name(board)
    need_tool(b.toolchain.cc)
    if b.run.qemu:
        need_tool(b.run.qemu, "apt-get install qemu-system-arm")
    (tmp_path / "big.yaml").write_text(BIG)
    r = cli("run", str(tmp_path / "big.yaml"), "--board", board, "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    plan = json.loads((tmp_path / "b/model/tvmgen_big_plan.json").read_text())
    scratch = {o["name"]: o["scratch"] for o in plan["operators"]}
    for name, (m, n, k) in SHAPES.items():
        assert scratch[name]["bytes"] == gemm_pack({"M": m, "N": n, "K": k}, b.tuning)
        assert scratch[name]["bytes"] <= b.tuning.gemm_scratch_max
    assert scratch["act"] is None and scratch["split"] is None
    # fc1 packs B in several blocks: the cap, not all of B, is what it gets.
    assert scratch["fc1"]["bytes"] < 4 * 300 * 200 // 4
    assert plan["arena"]["size"] >= max(s["offset"] + s["bytes"] for s in scratch.values() if s)
