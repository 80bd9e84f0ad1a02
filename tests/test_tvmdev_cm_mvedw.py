"""tvmdev_cm's Helium depthwise convolution across channels on the Cortex-M55
(runtime/kernels/tvmdev_cm/depthwise_conv2d_s8_mvec.c, tvmdev/plan/hooks/tvmdev_cm_mvedw.py)
and its Helium ADD (add_s8_mve.c), bit-exact with TFLM's interpreter.

Without a toolchain: which layers go across channels, which to the plane path, which are
declined, and the scratch; ADD on the M55 only. On mps3_an547 (QEMU): one-operator models
over the kernels' edges (tests/cm_cases.py MVEDW_CASES, :func:`add_cases`) and
person_detect and visual_wake_words end to end, each against TFLM's interpreter (the
requantization's vector arithmetic is the plane path's, checked at the edges by
tests/test_tvmdev_cm_mve.py).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, need_tool

from tvmdev.plan.hooks import tvmdev_cm_mve, tvmdev_cm_mvedw


def _compiled(tmp_path: Path) -> object:
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged(cm_cases.MVEDW_CASES)
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    return compile_model(m, board_by_name("mps3_an547"), Options(trees=(("cmsis_nn", "off"),)))


def test_which_path_and_scratch(tmp_path: Path) -> None:
    """On mps3_an547: the cases the plane path declines go across channels, with the
    ring's scratch; the plane path keeps its own; the rest go to the portable kernel."""
    import cm_cases
    c = _compiled(tmp_path)
    ops = {p.index: dict(p.params) for p in c.ops}  # type: ignore[attr-defined]
    scratch = {p.index: p.scratch[1] for p in c.ops}  # type: ignore[attr-defined]
    libs = [c.placements[op.index].library for op in c.model.operators]  # type: ignore[attr-defined]
    n = cm_cases.MVEDW_CHANNELS
    assert libs == ["tvmdev_cm"] * (n + 1) + ["portable"] * 3
    assert [tvmdev_cm_mve.plane_takes(ops[i]) for i in range(n + 1)] == [False] * n + [True]
    assert all(scratch[i] == tvmdev_cm_mvedw.scratch_bytes(ops[i]) for i in range(n))
    # 6 x 6 x 24: 3 blocks of 160 bytes of constants and 72 of filter, a ring of 3 rows
    # of 3 blocks of 8 columns (three pairs of outputs: (6 - 1) + 3) of 8 bytes
    assert scratch[0] == 3 * (160 + 72) + 3 * 3 * 8 * 8
    # 13 x 12 x 1, multiplier 8, stride 2: one block, rows of 13 columns (6 outputs,
    # three pairs: (6 - 1) * 2 + 3)
    assert scratch[5] == 160 + 72 + 3 * 13 * 8
    # 8 x 7 x 20: three blocks, the last of 4 channels; 7 outputs a row, four pairs
    assert scratch[1] == 3 * (160 + 72) + 3 * 3 * 10 * 8
    why = [c.placements[op.index].declined for op in c.model.operators][n + 1:]  # type: ignore[attr-defined]
    assert why == [
        "tvmdev_cm: 16 outputs per channel, 9 taps per input copied (tvmdev_cm's MVE path "
        "takes at least 64 and 4: CMSIS-NN's runs fewer instructions on fewer)",
        "tvmdev_cm: a 5x5 filter (tvmdev_cm's MVE path takes 3x3 and 7x7)",
        "tvmdev_cm: a channel multiplier of 2 (tvmdev_cm takes 1)"]
    # 3 x 3 outputs of 7x7 across channels; a ring of 7 rows of 126 columns of 64
    # channels is over the limit, so the plane path takes that one
    assert scratch[15] == tvmdev_cm_mvedw.scratch_bytes(ops[15]) == 3 * (160 + 49 * 8) + (
        7 * 3 * 10 * 8)
    assert tvmdev_cm_mvedw.scratch_bytes(ops[n]) > tvmdev_cm_mvedw.SCRATCH_MAX
    assert scratch[n] == tvmdev_cm_mve.plane_bytes(ops[n])


@pytest.mark.slow
def test_edges_bit_exact_with_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model, arrays = cm_cases.merged(cm_cases.MVEDW_CASES)
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", "mps3_an547",
                                  "--cmsis-nn", tree or "off")
    assert outputs == len(cm_cases.MVEDW_CASES)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    libs = [o["library"] for o in plan["operators"]]
    assert libs[:cm_cases.MVEDW_CHANNELS + 1] == ["tvmdev_cm"] * (cm_cases.MVEDW_CHANNELS + 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["person_detect", "visual_wake_words"])
def test_models_bit_exact_on_the_m55(name: str, tflite_model: Callable[[str], Path],
                                     cli: Callable[..., Result], tmp_path: Path) -> None:
    """person_detect (TFLM's tree) and visual_wake_words on mps3_an547: their depthwise
    convolutions on tvmdev_cm across channels (person_detect's first layer's multiplier
    of 8 among them) but the two with 3 x 3 outputs, every output TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    if name == "person_detect":
        from test_tflite_field_ops import field_model
        model = field_model("person_detect")
    else:
        model = tflite_model("visual_wake_words.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps3_an547",
                         extra=("--cmsis-nn", tree())) > 0
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    # tvmdev_cm's: every depthwise layer of at least 36 outputs per channel (person_detect
    # planned in bands); CMSIS-NN's: the two of 3 x 3 outputs
    libs = Counter(o["library"] for o in plan["operators"] if o["op"] == "depthwise_conv2d")
    assert libs == ({"tvmdev_cm": 25, "cmsis_nn": 2} if name == "person_detect" else
                    {"tvmdev_cm": 11, "cmsis_nn": 2})


# --- ADD on Helium (runtime/kernels/tvmdev_cm/add_s8_mve.c) --------------------------------

def add_cases(seed: int = 25) -> list:
    """ADD of operands of the output's shape: counts that are multiples of 4 and not (a
    tail of 1 to 3, and 7: the tail alone), 6400 (MCUNet VWW's 20x20x16), every fused
    activation, random scales (equal ones among them) and zero points; then a broadcast
    (declined)."""
    import itertools

    from s8_cases import ACTIVATIONS, ADD, Case, Tensor, rand_int8, rand_quant, rng

    from tvmdev.model.s8 import elementwise
    r = rng(seed)
    shapes = [[1, 4, 4, 3], [1, 5, 7, 3], [2, 3, 3, 2], [1, 1, 1, 7], [1, 20, 20, 16],
              [1, 6, 5, 5]]
    cases = []
    for shape, act in [*zip(shapes, itertools.cycle(ACTIVATIONS)),
                       *zip(shapes[:2], ["RELU6", "NONE"], strict=True)]:
        qa, qb, qo = rand_quant(r), rand_quant(r), rand_quant(r)
        if len(cases) % 3 == 1:
            qb = qa
        a, b = rand_int8(r, shape), rand_int8(r, shape)
        p = elementwise.add_params([tuple(shape)] * 2, tuple(shape), act, qa, qb, qo)
        cases.append(Case(f"add {shape} {act}", ADD, [Tensor(shape, qa), Tensor(shape, qb)],
                          Tensor(shape, qo),
                          ("AddOptions", {"FusedActivationFunction": ACTIVATIONS[act]}),
                          [a, b], p, elementwise.add_reference(a, b, p)))
    qa, qb, qo = rand_quant(r), rand_quant(r), rand_quant(r)
    a, b = rand_int8(r, [1, 4, 4, 3]), rand_int8(r, [3])
    p = elementwise.add_params([(1, 4, 4, 3), (3,)], (1, 4, 4, 3), "NONE", qa, qb, qo)
    cases.append(Case("add broadcast", ADD, [Tensor([1, 4, 4, 3], qa), Tensor([3], qb)],
                      Tensor([1, 4, 4, 3], qo), ("AddOptions", {"FusedActivationFunction": 0}),
                      [a, b], p, elementwise.add_reference(a, b, p)))
    return cases


def test_add_on_helium_only(tmp_path: Path) -> None:
    """tvmdev_cm's ADD on the M55 (but a broadcast); on the M4 it is CMSIS-NN's."""
    from s8_cases import merged

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = merged(add_cases())
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    for board, first in (("mps3_an547", "tvmdev_cm"), ("mps2_an386", "portable")):
        c = compile_model(m, board_by_name(board), Options(trees=(("cmsis_nn", "off"),)))
        libs = [c.placements[op.index].library for op in c.model.operators]
        assert libs == [first] * 8 + ["portable"], board
        why = c.placements[c.model.operators[-1].index].declined
        assert why == ("tvmdev_cm: a broadcast (tvmdev_cm's ADD takes operands of the "
                       "output's shape)" if first == "tvmdev_cm" else
                       "tvmdev_cm: add on the DSP path (tvmdev_cm's ADD is Helium's only)")


@pytest.mark.slow
def test_add_bit_exact_with_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    from s8_cases import merged
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    cases = add_cases()
    model, arrays = merged(cases)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", "mps3_an547",
                                  "--cmsis-nn", os.environ.get("CMSIS_NN_SOURCE_DIR") or "off")
    assert outputs == len(cases)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"]][:-1] == ["tvmdev_cm"] * 8
