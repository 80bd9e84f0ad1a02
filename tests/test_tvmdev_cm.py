"""tvmdev_cm, tvmdev's own Cortex-M kernel library (runtime/kernels/tvmdev_cm), specialized
at generation time (tvmdev/plan/hooks/tvmdev_cm.py), bit-exact with TFLM's interpreter.

Without a toolchain: the library's data, the layout of conv2d's filter and folded bias
(checked against the plain sum they replace), the requantization's shortcut against
TFLM's arithmetic (tvmdev.model.fixedpoint, itself checked against TFLM) over the edges
of every shift, and which operators the library takes or declines, with why. On the
boards (QEMU): one-operator models over the kernel's edges (tests/cm_cases.py) and
MCUNet VWW end to end, each against TFLM's interpreter.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.load.board import all_boards
from tvmdev.load.kernel_tree import activate, board_library
from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier
from tvmdev.plan.hooks import tvmdev_cm
from tvmdev.plan.kernels import portable_library

# --- data -----------------------------------------------------------------------------


def test_library_has_no_tree_and_every_kernel_a_portable_fallback() -> None:
    lib = board_library("tvmdev_cm")
    assert lib.tree is None and lib.probe_source is None and lib.hooks == "tvmdev_cm"
    assert {k.op for k in lib.kernels.kernels} == {"conv2d", "depthwise_conv2d",
                                                   "fully_connected", "add"}
    portable = portable_library().kernels
    for k in lib.kernels.kernels:
        int8 = {a: d[0] for a, d in k.arg_meta or ()}
        assert any(p.op == k.op and p.matches(int8) for p in portable), k.name
    active, notes = activate(("tvmdev_cm",), "cortex-m4")
    assert [(a.lib.name, a.root, a.arch) for a in active] == [("tvmdev_cm", None, "dsp")]
    assert notes == []
    active, notes = activate(("tvmdev_cm",), "cortex-m3")
    assert active == () and notes == [
        "tvmdev_cm: not for CPU cortex-m3; int8 operators use the portable kernels"]


def test_boards_list_it_before_cmsis_nn() -> None:
    arch = board_library("tvmdev_cm").arch
    taking = {b.name: b.libraries for b in all_boards().values() if "tvmdev_cm" in b.libraries}
    assert set(taking) == {"mps2_an386", "mps2_an500", "mps3_an547"}
    for name, libs in taking.items():
        assert libs == ("tvmdev_cm", "cmsis_nn"), name
        assert all_boards()[name].cpu in arch


# --- what the generator lays out --------------------------------------------------------

def _halves(word: int) -> tuple[int, int]:
    u = word & 0xFFFFFFFF
    lo, hi = u & 0xFFFF, u >> 16
    return lo - (lo >> 15 << 16), hi - (hi >> 15 << 16)


def test_conv_filter_pairs_and_folded_bias() -> None:
    """conv2d (OHWI, 3x3 over 3 channels: 27 taps, an odd count): each output channel's
    taps in the filter's order, paired, a zero after the last; the folded bias as
    depthwise's, over a window whose padding holds the zero point."""
    r = np.random.default_rng(3)
    m, zp = 5, 77
    w = r.integers(-127, 128, (m, 3, 3, 3))
    bias = r.integers(-5000, 5000, m)
    out = tvmdev_cm.pack_conv(w.reshape(m, -1).T, bias, -zp)
    words = np.asarray(out["packed_weights"].values).reshape(m, 14)
    for ch in range(m):
        taps = [t for word in words[ch] for t in _halves(int(word))]
        assert taps == [*w[ch].ravel().tolist(), 0]
    x = r.integers(-128, 128, (3, 3, 3))
    inside = r.random((3, 3)) < 0.5
    window = np.where(inside[..., None], x, zp)
    ours = (w * window).sum(axis=(1, 2, 3)) + np.asarray(out["folded_bias"].values)
    tflm = (w * (x - zp) * inside[..., None]).sum(axis=(1, 2, 3)) + bias
    assert np.array_equal(ours, tflm)


def _shortcut(acc: np.ndarray, mult: int, shift: int) -> np.ndarray:
    """tvmk_cm_requant's arithmetic (runtime/kernels/tvmdev_cm), in int64 numpy."""
    left, right = max(shift, 0) + 1, max(-shift, 0)
    a = acc << left
    assert np.all(np.abs(a) < 2**31)
    x = (a * mult + 2**31) >> 32  # SMMULR
    rnd = (1 << right - 1) if right else 0
    return np.asarray((x + rnd - ((x < 0) & (right > 0))) >> right)


@pytest.mark.parametrize("shift", [-31, -20, -9, -2, -1, 0, 1, 3, 7])
def test_requantization_shortcut_is_tflms_at_the_edges(shift: int) -> None:
    """Every accumulator the generator allows for the shift, at the ends of its range and
    at every rounding boundary near zero, with the smallest, largest and odd
    multipliers: the same result as TFLM's MultiplyByQuantizedMultiplier."""
    limit = (2**31 - 1) >> (max(shift, 0) + 1)
    near = np.arange(-4096, 4097)
    ends = np.concatenate([limit - np.arange(4096), -limit + np.arange(4096)])
    ties = np.concatenate([(np.arange(-64, 65) << max(-shift, 1)) + d for d in (-1, 0, 1)])
    acc = np.unique(np.concatenate([near, ends, ties]).clip(-limit, limit)).astype(np.int64)
    for mult in (2**30, 2**30 + 1, 1518500250, 2**31 - 1, 1895147668):
        want = multiply_by_quantized_multiplier(acc, np.int64(mult), np.int64(shift))
        assert np.array_equal(_shortcut(acc, mult, shift), np.asarray(want, np.int64)), mult


def test_a_layer_whose_accumulator_may_overflow_the_shortcut_is_declined() -> None:
    """The bound at its edge: channel 0 (left shift 2, doubled: times 8) reaches
    |bias| + 9 * 127 * 255 (a zero point of -128 puts x - zp at 255)."""
    from tvmdev.model.s8.call import CArray
    w = np.full((1, 3, 3, 2), 127)
    p = {"output_shift": CArray("int32_t", (2, -5)), "input_offset": 128}
    edge = (2**31 - 1) // 8 - 9 * 127 * 255  # the bound is then 2^28 - 1
    assert tvmdev_cm.requant_exact(w, np.array([edge, 0]), p)
    assert tvmdev_cm.requant_exact(w, np.array([-edge, 0]), p)
    assert not tvmdev_cm.requant_exact(w, np.array([edge + 1, 0]), p)


def test_what_it_takes_and_declines(tmp_path: Path) -> None:
    """On mps2_an386 without a CMSIS-NN tree: the kernel's cases to tvmdev_cm, the rest
    to the portable kernel, each refusal with its reason."""
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged()
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    c = compile_model(m, board_by_name("mps2_an386"), Options(trees=(("cmsis_nn", "off"),)))
    libs = [c.placements[op.index].library for op in c.model.operators]
    assert libs == ["tvmdev_cm"] * 13 + ["portable"] * 3
    assert [c.placements[op.index].declined for op in c.model.operators][13:] == [
        "tvmdev_cm: a channel multiplier of 2 (tvmdev_cm takes 1)",
        "tvmdev_cm: a 1x1 filter (tvmdev_cm takes 3x3, 5x5 and 7x7)",
        "tvmdev_cm: strides 3x3 (tvmdev_cm takes 1x1 and 2x2)"]
    first = next(p for p in c.ops if p.index == 0)  # 9 x 7, 3x3 stride 1, SAME
    assert first.scratch[1] == tvmdev_cm.plane_bytes(dict(first.params)) == (
        (11 * 10 * 2 + 3) // 4 * 4 + 4 * 3 * 2)  # the plane, then 3 rows of 2 words
    assert "packed_weights" not in first.params  # the kernel widens the int8 filter


def test_which_convolutions_it_takes(tmp_path: Path) -> None:
    """conv2d: the few-tap ones (a first convolution), the 1x1 one (conv1x1_s8.c,
    tests/test_tvmdev_cm_1x1.py) and the 36-tap one (conv_general_s8.c,
    tests/test_tvmdev_cm_conv.py) to tvmdev_cm."""
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged(cm_cases.CONV_CASES)
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    c = compile_model(m, board_by_name("mps2_an386"), Options(trees=(("cmsis_nn", "off"),)))
    libs = [c.placements[op.index].library for op in c.model.operators]
    assert libs == ["tvmdev_cm"] * 8
    assert "packed_weights" in next(p for p in c.ops if p.index == 7).params  # widened
    first = next(p for p in c.ops if p.index == 0)
    assert first.scratch[1] == 8 * 28 * 2  # 8 columns of 27 taps (and a zero), int16


# --- on the boards (emulated) -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps2_an500"])
def test_edges_bit_exact_with_tflm(board: str, cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    cases = cm_cases.CASES + cm_cases.CONV_CASES
    model, arrays = cm_cases.merged(cases)
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", board,
                                  "--cmsis-nn", tree or "off")
    assert outputs == len(cases)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"]].count("tvmdev_cm") == 13 + 8


@pytest.mark.slow
def test_mcunet_vww_bit_exact_on_tvmdev_cm(cli: Callable[..., Result],
                                           tmp_path: Path) -> None:
    """MCUNet VWW (TinyEngine's tree) on the Cortex-M4, its 15 depthwise convolutions, its
    first convolution and its 29 1x1 convolutions on tvmdev_cm, the rest on CMSIS-NN:
    every output equal to TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_field_ops import field_model
    from test_tflite_int8 import run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    assert run_bit_exact(cli, field_model("vww"), tmp_path, "mps2_an386",
                         extra=("--cmsis-nn", tree())) > 0
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert {o["library"] for o in plan["operators"]
            if o["op"] == "depthwise_conv2d"} == {"tvmdev_cm"}
    # (the bands of a patched operator counted once: it is one of the model's)
    assert len({o["name"].split(":patch")[0] for o in plan["operators"]
                if o["op"] == "conv2d" and o["library"] == "tvmdev_cm"}) == 1 + 29
