"""tvmdev_cm's int8 fully connected (runtime/kernels/tvmdev_cm/fully_connected_s8*.c,
tvmdev/plan/hooks/tvmdev_cm_fc.py), bit-exact with TFLM's interpreter.

Without a toolchain: which layers each code path takes and why it declines the rest,
kernel_sums' folded biases against numpy, and the DSP path's requantization from its
records (SMMULR, the rounding constant, the right shift) modelled in numpy against TFLM's
MultiplyByQuantizedMultiplier (tvmdev.model.fixedpoint, itself checked against TFLM) over
each row's reachable accumulators. On mps2_an386 (DSP) and mps3_an547 (Helium), under
QEMU: one-operator models over the kernels' edges (tests/fc_cases.py) and
anomaly_detection end to end, each against TFLM's interpreter.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier

BOARDS = ("mps2_an386", "mps3_an547")


def _compiled(tmp_path: Path, cases: list, board: str) -> object:
    import fc_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = fc_cases.merged(cases)
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    return compile_model(m, board_by_name(board), Options(trees=(("cmsis_nn", "off"),)))


def _all_cases() -> list:
    import fc_cases
    return fc_cases.CASES + fc_cases.DSP_DECLINED + fc_cases.DECLINED


@pytest.mark.parametrize("board", BOARDS)
def test_what_it_takes_and_declines(tmp_path: Path, board: str) -> None:
    """Without a CMSIS-NN tree: the edge cases to tvmdev_cm, the declined ones to the
    portable kernel with why (the requantization's proof only on the DSP path); the
    folded biases are the bias plus input_offset times the row's sum, int32."""
    import fc_cases
    c = _compiled(tmp_path, _all_cases(), board)
    ops = c.model.operators  # type: ignore[attr-defined]
    libs = [c.placements[op.index].library for op in ops]  # type: ignore[attr-defined]
    why = [c.placements[op.index].declined for op in ops]  # type: ignore[attr-defined]
    taken = len(fc_cases.CASES) + (board == "mps3_an547")
    assert libs == ["tvmdev_cm"] * taken + ["portable"] * (len(libs) - taken)
    zp = "tvmdev_cm: a weights zero point of 5 (tvmdev_cm's fully connected takes 0)"
    proof = ("accumulator may reach 2^30 after its left shift and its output is not "
             "constant (tvmdev_cm's requantization doubles it)")
    assert why[-1] == zp
    assert why[-2] is None if board == "mps3_an547" else proof in (why[-2] or "")
    for p in c.ops:  # type: ignore[attr-defined]
        if libs[p.index] != "tvmdev_cm":
            continue
        q = p.params
        w = np.asarray(c.model.constants[ops[p.index].inputs[1]], np.int64)  # type: ignore[attr-defined]
        b_name = ops[p.index].inputs[2] if len(ops[p.index].inputs) > 2 else None
        b = (np.asarray(c.model.constants[b_name], np.int64) if b_name  # type: ignore[attr-defined]
             else np.zeros(q["out_size"], np.int64))
        sums = (b + q["input_offset"] * w.sum(axis=1) + 2**31) % 2**32 - 2**31
        ks = np.asarray(q["kernel_sums"].values, np.int64)
        assert np.array_equal(ks[:q["out_size"]], sums)
        # the DSP path's records and flag follow; Helium's kernel_sums is the sums alone
        assert len(ks) == (q["out_size"] if board == "mps3_an547" else 5 * q["out_size"] + 1)
        assert p.scratch[1] == (0 if board == "mps3_an547" else 8 * -(-q["in_size"] // 4))


def _dsp_output(acc: np.ndarray, rec: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """tvmk_cm_fc_out's arithmetic (fully_connected_s8.c), per row record (multiplier,
    left shift + 1, c, right shift), in int64 numpy: the shift wraps as LSL does, SMMULR
    is (a * b + 2^31) >> 32, then (x + (x >> 31 where right > 0) + c) >> right, clamped."""
    m, left, c, right = (int(v) for v in rec)
    a = ((acc << left) + 2**31) % 2**32 - 2**31
    x = (a * m + 2**31) >> 32
    below = (x >> 31) if right > 0 else 0
    return np.clip((x + below + c) >> right, lo, hi)


def test_dsp_requantization_is_tflms_over_each_rows_range(tmp_path: Path) -> None:
    """Every row of the edge cases the DSP path takes: its record's arithmetic gives
    TFLM's MultiplyByQuantizedMultiplier plus the offset, clamped, over the accumulators
    it can reach (the ends of the range, around zero and its rounding ties)."""
    import fc_cases

    from tvmdev.plan.hooks.tvmdev_cm import accumulator_bound
    c = _compiled(tmp_path, fc_cases.CASES, "mps2_an386")
    ops = c.model.operators  # type: ignore[attr-defined]
    rows = 0
    for p in c.ops:  # type: ignore[attr-defined]
        q = p.params
        n = q["out_size"]
        w = np.asarray(c.model.constants[ops[p.index].inputs[1]], np.int64)  # type: ignore[attr-defined]
        b_name = ops[p.index].inputs[2] if len(ops[p.index].inputs) > 2 else None
        b = np.asarray(c.model.constants[b_name], np.int64) if b_name else None  # type: ignore[attr-defined]
        bound = accumulator_bound(w.T, b, q["input_offset"])
        recs = np.asarray(q["kernel_sums"].values[n:5 * n], np.int64).reshape(n, 4)
        mults = (q["channel_multiplier"].values if q["channel_multiplier"] is not None
                 else [q["output_multiplier"]] * n)
        shifts = (q["channel_shift"].values if q["channel_shift"] is not None
                  else [q["output_shift"]] * n)
        for r in range(n):
            bias = 0 if b is None else int(b[r])
            lo, hi = bias - int(bound[r] - abs(bias)), bias + int(bound[r] - abs(bias))
            near = np.arange(-600, 601)
            acc = np.unique(np.clip(np.concatenate([
                near, lo + np.arange(300), hi - np.arange(300),
                (np.arange(-40, 41) << max(-shifts[r], 1)) + 1]), lo, hi))
            want = np.clip(multiply_by_quantized_multiplier(acc, mults[r], shifts[r])
                           + q["output_offset"], q["activation_min"], q["activation_max"])
            got = _dsp_output(acc, recs[r], q["activation_min"], q["activation_max"])
            assert np.array_equal(got, want), (p.index, r)
            rows += 1
    assert rows == sum(f.rows for f in fc_cases.CASES)


# --- on the boards (emulated) -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
def test_edges_bit_exact_with_tflm(board: str, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    """The edge cases on the board, with CMSIS-NN behind tvmdev_cm: every output equal
    to TFLM's interpreter's, and tvmdev_cm took what it should."""
    import fc_cases
    from test_cmsis_nn import tree
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    cases = _all_cases()
    model, arrays = fc_cases.merged(cases)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", board,
                                  "--cmsis-nn", tree())
    assert outputs == len(cases)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    taken = len(fc_cases.CASES) + (board == "mps3_an547")
    assert [o["library"] for o in plan["operators"]] == (
        ["tvmdev_cm"] * taken + ["cmsis_nn"] * (len(cases) - taken))


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
def test_anomaly_detection_bit_exact(board: str, tflite_model: Callable[[str], Path],
                                     cli: Callable[..., Result], tmp_path: Path) -> None:
    """anomaly_detection (ten FULLY_CONNECTED layers) on the M4 and the M55: every fully
    connected layer on tvmdev_cm, every output equal to TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model("anomaly_detection.tflite")
    assert run_bit_exact(cli, model, tmp_path, board,
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY["anomaly_detection"]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    fcs = [o["library"] for o in plan["operators"] if o["op"] == "fully_connected"]
    assert fcs == ["tvmdev_cm"] * 10
