"""tvmdev_cm's general convolution on the Cortex-M4/M7 (runtime/kernels/tvmdev_cm/
conv_general_s8.c; its decisions: tvmdev/plan/hooks/tvmdev_cm_conv.py): a conv2d of more
than 32 taps per output channel as the 1x1's group cores over each output pixel's window.

Without a toolchain: which convolutions it takes, with the widened filter within the
board's flash budget (counted with the 1x1's, in the model's order) and the int8 one past
it, and its scratch. On the boards (QEMU): one-operator models over the kernel's edges
(tests/cm_cases.GEN_CASES: strides, paddings, filter sizes, rows of taps that end inside a
quad, odd channel counts, extreme and tie-making scales, zero points at both ends) with
the widened and the int8 filter, and image_classification (ResNet-8) whole, against TFLM's
interpreter; plan.json shows tvmdev_cm took them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.plan.hooks import tvmdev_cm_1x1, tvmdev_cm_conv


def _taps(d: object) -> int:
    return d.k * (d.kw or d.k) * d.c  # type: ignore[attr-defined]


def _compile(tmp_path: Path, flash: int | None = None) -> object:
    import cm_cases
    from test_tvmdev_cm_1x1 import _compile as compile_cases
    return compile_cases(tmp_path, flash, cm_cases.GEN_CASES)


def test_which_general_convolutions_it_takes(tmp_path: Path) -> None:
    """GEN_CASES on mps2_an386 (a 64 KiB budget): every one, widened; the scratch four
    windows widened and one gathered."""
    import cm_cases
    c = _compile(tmp_path)
    ops = {p.index: p for p in c.ops}  # type: ignore[attr-defined]
    placements = c.placements  # type: ignore[attr-defined]
    assert all(d.conv and _taps(d) > tvmdev_cm_conv.TAPS_MAX for d in cm_cases.GEN_CASES)
    assert [placements[i].library for i in ops] == ["tvmdev_cm"] * len(cm_cases.GEN_CASES)
    for i, d in enumerate(cm_cases.GEN_CASES):
        quads = (_taps(d) + 3) // 4
        assert ops[i].scratch[1] == 36 * quads
        words = ops[i].params["packed_weights"].values
        assert len(words) * 4 == tvmdev_cm_1x1.packed_bytes(d.conv, _taps(d))


def test_past_the_budget_the_filter_stays_int8(tmp_path: Path) -> None:
    """A budget of the first two layers' widened filters: the later ones keep their int8
    filter (records in folded_bias) where their taps are a multiple of 4; the others go
    on, saying why."""
    import cm_cases
    cases = cm_cases.GEN_CASES
    m = _compile(tmp_path, 0).model  # type: ignore[attr-defined]
    two = sum(tvmdev_cm_1x1.added_bytes(m, op) for op in m.operators[:2])
    c = _compile(tmp_path, two)
    ops = {p.index: p for p in c.ops}  # type: ignore[attr-defined]
    placements = c.placements  # type: ignore[attr-defined]
    assert [placements[i].library for i in ops] == [
        "tvmdev_cm" if i < 2 or _taps(d) % 4 == 0 else "portable" for i, d in enumerate(cases)]
    assert ops[1].params["packed_weights"] is not None
    assert ops[2].params["packed_weights"] is None
    assert len(ops[2].params["folded_bias"].values) == 5 * cases[2].conv
    need = tvmdev_cm_1x1.added_bytes(m, m.operators[3])
    assert placements[3].declined == (
        f"tvmdev_cm: its filter widened adds {need} bytes, beyond the board's flash budget "
        f"(0 of {two} bytes left: library_flash: tvmdev_cm), and 45 taps per output "
        "channel (its int8 filter's rows are read in words)")


def test_widened_general_filters_count_against_the_1x1s_budget(tmp_path: Path) -> None:
    """A 1x1 after a general convolution has the budget less the convolution's widened
    filter."""
    import cm_cases

    from tvmdev.frontends.importer import import_file
    cases = [cm_cases.GEN_CASES[0], cm_cases.PW_CASES[0]]
    model, _ = cm_cases.merged(cases)
    (tmp_path / "m.tflite").write_bytes(model)
    m = import_file(tmp_path / "m.tflite").to_model()
    # the widened words less the int8 filter and bias they replace
    first = tvmdev_cm_1x1.packed_bytes(16, 144) - 16 * 144 - (
        4 * 16 if len(m.operators[0].inputs) > 2 and m.operators[0].inputs[2] else 0)
    assert tvmdev_cm_1x1.added_bytes(m, m.operators[0]) == first
    assert tvmdev_cm_1x1.budget_left(m, m.operators[1], 65536) == 65536 - first


@pytest.mark.parametrize(("k", "c", "m", "stride", "zp_in"),
                         [(3, 5, 7, 2, -128), (3, 16, 4, 1, 127), (2, 3, 5, 1, 0),
                          (5, 2, 3, 2, -7)])
def test_windows_padded_with_the_zero_point_are_tflms_sum(k: int, c: int, m: int,
                                                          stride: int, zp_in: int) -> None:
    """Every output of a random layer with SAME padding: the 1x1's reading of the words
    laid out over the taps (tests/test_tvmdev_cm_1x1.py's ``_kernel``), on each window
    padded with the input's zero point as conv_general_s8.c widens it, is TFLM's output
    (the accumulator over the taps inside the input, written out, then
    MultiplyByQuantizedMultiplier, the offset, the clamp)."""
    from test_tvmdev_cm_1x1 import _kernel, _params

    from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier
    r = np.random.default_rng(k * 1000 + c)
    h, w_ = 6, 5
    oh, ow = -(-h // stride), -(-w_ // stride)
    pad_t = max((oh - 1) * stride + k - h, 0) // 2
    pad_l = max((ow - 1) * stride + k - w_, 0) // 2
    filt = r.integers(-128, 128, (m, k, k, c))
    filt[0, 0, 0, 0] = -128
    bias = r.integers(-2**16, 2**16, m)
    x = r.integers(-128, 128, (h, w_, c))
    p = {**_params(r, m, zp_in, 3), "C": c * k * k}
    w = filt.reshape(m, -1).T  # taps x M, the hook's _operands
    words = np.asarray(tvmdev_cm_1x1.pack(w, bias, p)["packed_weights"].values, np.int64)
    mult = np.asarray(p["output_multiplier"].values, np.int64)  # type: ignore[attr-defined]
    shift = np.asarray(p["output_shift"].values, np.int64)  # type: ignore[attr-defined]
    padded = np.full((h + 2 * k, w_ + 2 * k, c), zp_in)
    padded[k:k + h, k:k + w_] = x
    for oy in range(oh):
        for ox in range(ow):
            iy, ix = oy * stride - pad_t, ox * stride - pad_l
            window = padded[k + iy:k + iy + k, k + ix:k + ix + k].reshape(-1)
            acc = bias.copy()
            for ky in range(k):
                for kx in range(k):
                    if 0 <= iy + ky < h and 0 <= ix + kx < w_:
                        acc += ((x[iy + ky, ix + kx] - zp_in)[:, None]
                                * filt[:, ky, kx].T).sum(axis=0)
            want = np.clip(multiply_by_quantized_multiplier(acc, mult, shift) + 3, -128, 127)
            assert np.array_equal(_kernel(words, window, m, -128, 127), want), (oy, ox)


def test_a_left_shift_beyond_int16_is_declined() -> None:
    """Output shift 8 in a channel: the widened filter scaled by 2^9 would not fit int16."""
    from test_tvmdev_cm_1x1 import _params
    p = {**_params(np.random.default_rng(3), 2, 0, 0, np.array([-3, 8])), "C": 4, "KH": 3,
         "KW": 3, "M": 2}
    w = np.full((36, 2), 1)
    assert tvmdev_cm_conv.decline(None, None, p, w, None, 0) == (  # type: ignore[arg-type]
        "an output shift of 8 in channel 1 (tvmdev_cm's convolution scales its int16 "
        "filter by 2^(shift + 1), at most 2^8)")


# --- on the boards (emulated) -------------------------------------------------------------

def _plan(tmp_path: Path) -> list[dict[str, object]]:
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    return list(plan["operators"])


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps2_an500"])
def test_general_edges_bit_exact_with_tflm(board: str, cli: Callable[..., Result],
                                           tmp_path: Path) -> None:
    """Every case on tvmdev_cm with its widened filter, TFLM's outputs."""
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model, arrays = cm_cases.merged(cm_cases.GEN_CASES)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", board,
                                  "--cmsis-nn", "off")
    assert outputs == len(cm_cases.GEN_CASES)
    assert [o["library"] for o in _plan(tmp_path)] == ["tvmdev_cm"] * len(cm_cases.GEN_CASES)


@pytest.mark.slow
def test_int8_filter_general_edges_bit_exact_with_tflm(cli: Callable[..., Result],
                                                       tmp_path: Path) -> None:
    """The M4 with no flash budget (its YAML copied, library_flash 0): every case whose
    taps are a multiple of 4 on the int8 filter, four windows at a time (odd pixel counts
    leave a short tile), TFLM's outputs."""
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm

    from tvmdev.load.board import board_by_name
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    text = board_by_name("mps2_an386").path.read_text()
    assert "library_flash: {tvmdev_cm: 32768}" in text
    (tmp_path / "b.yaml").write_text(text.replace("library_flash: {tvmdev_cm: 32768}",
                                                  "library_flash: {tvmdev_cm: 0}"))
    model, arrays = cm_cases.merged(cm_cases.GEN_CASES)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board",
                                  str(tmp_path / "b.yaml"), "--cmsis-nn", "off")
    assert outputs == len(cm_cases.GEN_CASES)
    assert [o["library"] for o in _plan(tmp_path)] == [
        "tvmdev_cm" if _taps(d) % 4 == 0 else "portable" for d in cm_cases.GEN_CASES]


@pytest.mark.slow
def test_image_classification_bit_exact_with_its_3x3s_on_tvmdev_cm(
        tflite_model: Callable[[str], Path], cli: Callable[..., Result],
        tmp_path: Path) -> None:
    """image_classification (ResNet-8) on the Cortex-M4: every convolution on tvmdev_cm
    (its 3x3s on the general kernel), every output TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model("image_classification.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps2_an386",
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY["image_classification"]
    convs = [o for o in _plan(tmp_path) if str(o["op"]).startswith("conv2d")]
    # its nine, the first stage's three patched band by band (five bands each)
    assert len(convs) == 6 + 3 * 5 and {o["op"] for o in convs} == {"conv2d"}
    assert {o["library"] for o in convs} == {"tvmdev_cm"}
