"""tvmdev_cm's Helium 1x1 convolution over any channel count and stride
(runtime/kernels/tvmdev_cm/conv1x1_s8_mve.c, tvmk_cm_mve_mm.h,
tvmdev/plan/hooks/tvmdev_cm_mve_1x1.py), bit-exact with TFLM's interpreter.

Without a toolchain: which 1x1 layers the M55 gives it and its scratch. On mps3_an547
(QEMU): one-layer models over the kernel's edges (input channels 1 to 300, multiples of 16
and not, the tile's last chunk of 1 to 15 bytes, one and odd output channels, pixel counts
that fill the last tile and not, strides 2 and 3, two images, extreme scales and zero
points, every activation), and keyword_spotting and visual_wake_words end to end, each
against TFLM's interpreter; the plan says tvmdev_cm took them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cm_cases import Dw
from conftest import Result, need_tool

from tvmdev.plan.hooks import tvmdev_cm_mve_1x1

# (h, w, C, stride, M, more): C > 16 or a stride, so the new kernel takes each
CASES = [
    Dw(5, 4, 17, 1, 1, conv=8), Dw(4, 5, 31, 1, 1, conv=7, act="RELU6"),
    Dw(6, 6, 48, 1, 1, conv=33, extreme=True), Dw(3, 5, 64, 1, 1, conv=1, zp_in=-128),
    Dw(4, 4, 100, 1, 1, conv=5, zp_in=127, zp_out=127, act="RELU"),
    Dw(2, 4, 255, 1, 1, conv=3, extreme=True, zp_out=-128),
    Dw(4, 2, 300, 1, 1, conv=9, act="RELU_N1_TO_1"),
    Dw(8, 8, 5, 1, 2, conv=6), Dw(9, 9, 40, 1, 2, conv=11, extreme=True),
    Dw(12, 10, 1, 1, 3, conv=4, zp_in=-128), Dw(8, 8, 20, 1, 2, conv=16, n=2),
    Dw(5, 5, 32, 1, 1, conv=2, small=True),
    Dw(7, 6, 47, 1, 1, conv=13, n=2, top=6, extreme=True),
    Dw(4, 6, 16, 1, 1, conv=24, act="RELU"),
]


def test_hook_takes_every_channel_count_and_declines_a_wasted_tile(tmp_path: Path) -> None:
    """On mps3_an547 without a CMSIS-NN tree: every case to tvmdev_cm with the scratch the
    kernel checks (20 bytes an output channel and one more, the tile, 32 bytes of sums, 8
    of staging); a 1x1 over 9 pixels declined with why."""
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged(CASES + [Dw(3, 3, 40, 1, 1, conv=8)])
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    c = compile_model(m, board_by_name("mps3_an547"), Options(trees=(("cmsis_nn", "off"),)))
    placed = [c.placements[op.index] for op in c.model.operators]
    assert [p.library for p in placed] == ["tvmdev_cm"] * len(CASES) + ["portable"]
    assert placed[-1].declined == (
        "tvmdev_cm: 9 pixels in tiles of 4 (12 rows computed: tvmdev_cm's MVE 1x1 takes at "
        "most 1.125x, CMSIS-NN's runs fewer instructions)")
    scratch = {p.index: p.scratch[1] for p in c.ops}
    # 300 input channels (19 chunks of 16), 9 output channels
    assert scratch[6] == tvmdev_cm_mve_1x1.scratch_bytes(dict(c.ops[6].params)) == (
        20 * 10 + 64 * 19 + 32 + 8)


@pytest.mark.slow
def test_edges_bit_exact_with_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    import os

    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model, arrays = cm_cases.merged(CASES, seed=26)
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", "mps3_an547",
                                  "--cmsis-nn", tree or "off")
    assert outputs == len(CASES)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"]] == ["tvmdev_cm"] * len(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("name,pointwise", [("keyword_spotting", 4),
                                            ("visual_wake_words", 11)])
def test_mlperf_tiny_bit_exact_with_its_1x1s(name: str, pointwise: int,
                                             tflite_model: Callable[[str], Path],
                                             cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    """keyword_spotting's four 64 -> 64 and visual_wake_words' 1x1 convolutions on
    tvmdev_cm's MVE path (but the two over 3x3 pixels: CMSIS-NN, and the rest), every output
    TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model(f"{name}.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps3_an547",
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY[name]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    own = [o for o in plan["operators"] if o["op"] == "conv2d" and o["library"] == "tvmdev_cm"
           and plan["tensors"][o["inputs"][1]]["shape"][1:3] == [1, 1]]  # the 1x1s
    assert len(own) == pointwise
