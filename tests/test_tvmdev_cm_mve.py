"""tvmdev_cm's Helium (MVE) path on the Cortex-M55 (runtime/kernels/tvmdev_cm/*_mve.c,
tvmdev/plan/hooks/tvmdev_cm_mve.py), bit-exact with TFLM's interpreter.

Without a toolchain: the path is the M55's, which layers it takes and why it declines the
rest, its scratch, and its vector requantization (VQRDMULH, the fix-up, VRSHL) modelled
in numpy against TFLM's MultiplyByQuantizedMultiplier (tvmdev.model.fixedpoint, itself
checked against TFLM) at the edges of every shift. On mps3_an547 (QEMU): one-operator
models over the kernel's edges (tests/cm_cases.py MVE_CASES), keyword_spotting and MCUNet
VWW end to end, each against TFLM's interpreter.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.load.kernel_tree import activate
from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier
from tvmdev.plan.hooks import tvmdev_cm_mvedw

I32 = 2**31


def test_the_m55_takes_the_mve_path() -> None:
    active, notes = activate(("tvmdev_cm",), "cortex-m55")
    assert [(a.lib.name, a.arch) for a in active] == [("tvmdev_cm", "mve")] and notes == []


def _sat(v: np.ndarray) -> np.ndarray:
    return np.clip(v, -I32, I32 - 1)


def _wrap(v: np.ndarray) -> np.ndarray:
    return (v + I32) % 2**32 - I32


def _mve_requantize(acc: np.ndarray, mult: int, shift: int) -> np.ndarray:
    """tvmk_cm_mve_requantize's arithmetic (depthwise_conv2d_s8_mve.c), per lane, in int64
    numpy: VSHL (wrapping), VQRDMULH (saturating), the fix-up (VQADD of -1 for a negative
    value when right > 0), VRSHL by -right (rounding, ties up, no overflow)."""
    left, right = max(shift, 0), max(-shift, 0)
    x = _wrap(acc << left)
    x = _sat((2 * x * mult + 2**31) >> 32)  # SQRDMULH: (2ab + 2^31) >> 32, saturated
    x = _sat(x + ((x < 0) & (right > 0)) * -1)
    return np.asarray((x + ((1 << right) >> 1)) >> right) if right else x


@pytest.mark.parametrize("shift", [-31, -20, -9, -2, -1, 0, 1, 3, 7, 10])
def test_vector_requantization_is_tflms_at_the_edges(shift: int) -> None:
    """Every int32 accumulator class that matters: the ends of the range, around zero and
    every rounding tie near it, the ones whose left shift wraps; the multipliers at the
    ends of TFLM's range: the same as TFLM's MultiplyByQuantizedMultiplier."""
    near = np.arange(-4096, 4097)
    ends = np.concatenate([I32 - 1 - np.arange(2048), -I32 + np.arange(2048)])
    ties = np.concatenate([(np.arange(-64, 65) << max(-shift, 1)) + d for d in (-1, 0, 1)])
    wraps = np.concatenate([(I32 >> max(shift, 0)) + np.arange(-8, 9),
                            -(I32 >> max(shift, 0)) + np.arange(-8, 9)])
    acc = np.unique(np.concatenate([near, ends, ties, wraps]).clip(-I32, I32 - 1))
    # TFLM's x * 2^left must fit int32 (fixedpoint raises otherwise): those accumulators
    acc = acc[np.abs(acc.astype(np.int64) << max(shift, 0)) < I32].astype(np.int64)
    assert len(acc) > 8000
    for mult in (2**30, 2**30 + 1, 1518500250, I32 - 1, 1895147668):
        want = multiply_by_quantized_multiplier(acc, np.int64(mult), np.int64(shift))
        assert np.array_equal(_mve_requantize(acc, mult, shift), np.asarray(want, np.int64)), mult


def _compiled(tmp_path: Path, cases: list) -> object:
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged(cases)
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    return compile_model(m, board_by_name("mps3_an547"), Options(trees=(("cmsis_nn", "off"),)))


def test_what_it_takes_and_declines(tmp_path: Path) -> None:
    """On mps3_an547 without a CMSIS-NN tree: the MVE cases to tvmdev_cm with their
    scratch, the ones it declines to the portable kernel with why."""
    import cm_cases
    c = _compiled(tmp_path, cm_cases.MVE_CASES)
    libs = [c.placements[op.index].library for op in c.model.operators]  # type: ignore[attr-defined]
    # depthwise: every layer here goes across channels (tvmdev_cm_mvedw.py,
    # tests/test_tvmdev_cm_mvedw.py) but a 5 x 5 plane of 3x3, which both paths decline
    taken = cm_cases.MVE_TAKEN
    assert libs == ["tvmdev_cm"] * taken + ["portable"] + ["tvmdev_cm"] * 2 + [
        "portable"] * (len(libs) - taken - 3)
    why = [c.placements[op.index].declined for op in c.model.operators][taken:]  # type: ignore[attr-defined]
    assert why == [
        "tvmdev_cm: 25 outputs per channel, 9 taps per input copied (tvmdev_cm's MVE path "
        "takes at least 64 and 4: CMSIS-NN's runs fewer instructions on fewer)", None, None,
        "tvmdev_cm: 9 pixels in tiles of 4 (12 rows computed: tvmdev_cm's MVE 1x1 takes "
        "at most 1.125x, CMSIS-NN's runs fewer instructions)",
        "tvmdev_cm: 4104 taps per output channel (tvmdev_cm's MVE conv2d takes at most "
        "4096)"]
    ops = {p.index: dict(p.params) for p in c.ops}  # type: ignore[attr-defined]
    scratch = {p.index: p.scratch[1] for p in c.ops}  # type: ignore[attr-defined]
    # 9 x 8 SAME 3x3: across channels (one block: a ring of 3 rows of 10 columns)
    assert scratch[0] == tvmdev_cm_mvedw.scratch_bytes(ops[0]) == 160 + 72 + 3 * 10 * 8
    # 17 x 16 SAME 7x7, 4 channels: one block, 7 taps x 7 of 8 bytes, a ring of 7 rows
    # of 16 + 6 columns
    assert scratch[2] == tvmdev_cm_mvedw.scratch_bytes(ops[2]) == 160 + 49 * 8 + 7 * 22 * 8
    # 1x1, 12 output channels: 20 bytes of constants each
    assert scratch[10] == 20 * 12
    assert ops[10]["packed_weights"] is None and ops[10]["folded_bias"] is None  # no layout
    # the general convolutions: two windows (three with C not a multiple of 16), each its
    # taps rounded up to 16; the filter's rows padded to 16 bytes (none when they are), 20
    # words of constants per group of four channels
    for i, d in enumerate(cm_cases.MVE_CONV_CASES, start=17):
        taps = d.k * (d.kw or d.k) * d.c
        chunks, groups = -(-taps // 16), -(-d.conv // 4)
        assert scratch[i] == (2 if d.c % 16 == 0 else 3) * 16 * chunks, d
        packed = ops[i]["packed_weights"]
        assert (packed is None) if taps % 16 == 0 else len(packed.values) == 4 * chunks * d.conv
        assert len(ops[i]["folded_bias"].values) == 20 * groups, d


def _general_conv(x: np.ndarray, w: np.ndarray, fb: np.ndarray, p: dict) -> np.ndarray:
    """conv2d_gen_s8_mve.c's arithmetic in numpy, on the arrays the hooks laid out: each
    window gathered (padding the zero point, taps rounded up to 16 with anything: here
    random bytes, which the zero weights must cancel), the dot products with the filter's
    rows ``w`` (M x chunks x 16; the last group's missing channels read the last row
    again), wrapping int32, each group's folded bias and _mve_requantize's steps with its
    vectors of multipliers and shifts."""
    kh, kw, c, m = p["KH"], p["KW"], p["C"], p["M"]
    chunks, groups = -(-kh * kw * c // 16), -(-m // 4)
    w = w.reshape(m, chunks * 16)[np.minimum(np.arange(groups * 4), m - 1)]
    consts = np.asarray(fb, np.int64).reshape(groups, 5, 4).transpose(1, 0, 2).reshape(5, -1)
    zp = -p["input_offset"]
    pad = np.full((p["N"], p["H"] + kh + p["OH"] * p["stride_h"],
                   p["W"] + kw + p["OW"] * p["stride_w"], c), zp, np.int64)
    pad[:, p["pad_top"]:p["pad_top"] + p["H"], p["pad_left"]:p["pad_left"] + p["W"]] = x
    r = np.random.default_rng(5)
    out = np.zeros((p["N"], p["OH"], p["OW"], m), np.int64)
    for oy in range(p["OH"]):
        for ox in range(p["OW"]):
            y0, x0 = oy * p["stride_h"], ox * p["stride_w"]
            win = pad[:, y0:y0 + kh, x0:x0 + kw].reshape(p["N"], -1)
            rest = r.integers(-128, 128, (p["N"], chunks * 16 - win.shape[1]))
            acc = _wrap(np.concatenate([win, rest], axis=1) @ w.T + consts[0])
            q = []
            for j in range(groups * 4):
                shift = int(consts[2, j] + consts[3, j])
                q.append(_mve_requantize(acc[:, j], int(consts[1, j]), shift)
                         if consts[1, j] else np.zeros(p["N"], np.int64))
            out[:, oy, ox] = np.stack(q, axis=1)[:, :m]
    lo, hi = p["activation_min"], p["activation_max"]
    return np.clip(out + p["output_offset"], lo, hi)


def test_general_conv_layout_is_tflms(tmp_path: Path) -> None:
    """The general convolution's layout (tvmdev_cm_mve_conv.pack) through the kernel's
    arithmetic in numpy equals TFLM's interpreter on every MVE_CONV_CASES layer: the
    filter's rows (padded or the filter itself), the padding's zero point, the bias
    folded with the weights' sums, the constants per group (the last one's padded
    channels dropped)."""
    import cm_cases
    import tflm_ref
    cases = cm_cases.MVE_CONV_CASES
    c = _compiled(tmp_path, cases)
    model, arrays = cm_cases.merged(cases)
    want = tflm_ref.outputs(model, arrays, len(cases), arena=1 << 22)
    for op in c.ops:  # type: ignore[attr-defined]
        p = dict(op.params)
        if p["packed_weights"] is not None:  # the rows padded
            w = np.frombuffer(np.asarray(p["packed_weights"].values, "<i4").tobytes(), np.int8)
        else:  # the filter itself
            filt = c.model.operators[op.index].inputs[1]  # type: ignore[attr-defined]
            w = np.asarray(c.model.constants[filt]).reshape(-1)  # type: ignore[attr-defined]
        got = _general_conv(arrays[op.index].astype(np.int64), w.astype(np.int64),
                            p["folded_bias"].values, p)
        assert np.array_equal(got, want[op.index].astype(np.int64)), cases[op.index]


# --- on the board (emulated) --------------------------------------------------------------

@pytest.mark.slow
def test_edges_bit_exact_with_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model, arrays = cm_cases.merged(cm_cases.MVE_CASES)
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", "mps3_an547",
                                  "--cmsis-nn", tree or "off")
    assert outputs == len(cm_cases.MVE_CASES)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    libs = [o["library"] for o in plan["operators"]]
    assert libs[:cm_cases.MVE_TAKEN] == ["tvmdev_cm"] * cm_cases.MVE_TAKEN


@pytest.mark.slow
def test_keyword_spotting_bit_exact_on_the_m55(tflite_model: Callable[[str], Path],
                                               cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    """keyword_spotting on mps3_an547: its four depthwise convolutions, its first
    convolution (10x4 over one channel, the general kernel) and its four 1x1 ones on
    tvmdev_cm's MVE path, the rest on CMSIS-NN; every output equal to TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model("keyword_spotting.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps3_an547",
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY["keyword_spotting"]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert {o["library"] for o in plan["operators"] if o["op"] == "depthwise_conv2d"} == {
        "tvmdev_cm"}
    assert [o["library"] for o in plan["operators"] if o["op"] == "conv2d"] == [
        "tvmdev_cm"] * 5


@pytest.mark.slow
def test_image_classification_bit_exact_on_the_m55(tflite_model: Callable[[str], Path],
                                                   cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    """image_classification (ResNet-8) on mps3_an547: its 3x3 convolutions on tvmdev_cm's
    general MVE convolution, its strided 1x1 shortcuts on its 1x1 one, the rest on
    CMSIS-NN; every output TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model("image_classification.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps3_an547", extra=(
        "--cmsis-nn", tree(), "--patch", "off")) == MLPERF_TINY["image_classification"]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    convs = [o for o in plan["operators"] if o["op"] == "conv2d"]
    assert len(convs) == 9 and [o["library"] for o in convs].count("tvmdev_cm") == 9


@pytest.mark.slow
def test_mcunet_vww_bit_exact_on_the_m55(cli: Callable[..., Result], tmp_path: Path) -> None:
    """MCUNet VWW (TinyEngine's tree) on mps3_an547: ten of its depthwise convolutions
    (across channels: all but four 3x3 ones over 5 x 5 or 3 x 3 outputs and a 5x5 one
    over 3 x 3), its eight ADDs, 22 of its 1x1 convolutions (conv2d_s8_mve.c's over at
    most 16 channels, conv1x1_s8_mve.c's over more) and its first convolution (3x3 over 3
    channels, conv2d_gen_s8_mve.c) on tvmdev_cm's MVE path, the rest on CMSIS-NN; every
    output TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_field_ops import field_model
    from test_tflite_int8 import run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    # (unpatched: the counts below are of the model's operators, not of bands)
    assert run_bit_exact(cli, field_model("vww"), tmp_path, "mps3_an547",
                         extra=("--cmsis-nn", tree(), "--patch", "off")) > 0
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    own = [o["op"] for o in plan["operators"] if o["library"] == "tvmdev_cm"]
    assert (own.count("depthwise_conv2d"), own.count("conv2d"), own.count("add")) == (
        10, 23, 8)
