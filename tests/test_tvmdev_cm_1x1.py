"""tvmdev_cm's 1x1 convolution (runtime/kernels/tvmdev_cm/conv1x1_s8.c; its layout and
proofs: tvmdev/plan/hooks/tvmdev_cm_1x1.py), bit-exact with TFLM.

Without a toolchain: the laid-out filter read back as the kernel reads it (SXTB16's pairs,
SMLAD's sums, each record's requantization) against TFLM's arithmetic written out
(sum((x - zero point) * w) + bias, then MultiplyByQuantizedMultiplier, itself checked
against TFLM in tests/test_fixedpoint.py); the one-add rounding and offset over every
offset and every rounding boundary, at the proof's edge; which convolutions it takes, and
the flash budget. On the boards (QEMU): one-operator models over the kernel's edges
(tests/cm_cases.PW_CASES), keyword_spotting and MCUNet VWW, against TFLM's interpreter.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot
from tvmdev.model.s8.call import CArray
from tvmdev.plan.hooks import tvmdev_cm_1x1

# --- the layout, read back as the kernel reads it ---------------------------------------


def _halves(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u = words.astype(np.int64) & 0xFFFFFFFF
    lo, hi = u & 0xFFFF, u >> 16
    return lo - (lo >> 15 << 16), hi - (hi >> 15 << 16)


def _kernel(words: np.ndarray, x: np.ndarray, m: int, lo: int, hi: int) -> np.ndarray:
    """conv1x1_s8.c's arithmetic on one pixel ``x`` (C int8), in int64 numpy: SXTB16 of
    each four activations (bytes 0 and 2, then 1 and 3), SMLAD against each group's
    words, the record's requantization."""
    c = x.size
    q = (c + 3) // 4
    xs = np.zeros(4 * q, np.int64)
    xs[:c] = x
    even, odd = xs.reshape(q, 4)[:, 0::2], xs.reshape(q, 4)[:, 1::2]  # (x0, x2), (x1, x3)
    out = []
    for g in range(-(-m // 4)):
        block = words[g * (16 + 8 * q):(g + 1) * (16 + 8 * q)]
        acc = block[:4].copy()
        body = block[4:4 + 8 * q].reshape(q, 2, 4)
        for j in range(q):
            for half, pair in ((0, even[j]), (1, odd[j])):
                lo16, hi16 = _halves(body[j, half])
                acc += pair[0] * lo16 + pair[1] * hi16
        acc = (acc + 2**31) % 2**32 - 2**31  # SMLAD wraps
        rec = block[4 + 8 * q:].reshape(4, 3)
        xq = (acc * rec[:, 0] + 2**31) >> 32  # SMMULR
        v = (xq + np.where(rec[:, 2] > 0, xq >> 31, 0) + rec[:, 1]) >> rec[:, 2]
        out += list(np.clip(v, lo, hi))
    return np.asarray(out[:m], np.int64)


def _params(r: np.random.Generator, m: int, zp_in: int, zp_out: int,
            shifts: np.ndarray | None = None) -> dict[str, object]:
    mult = r.integers(2**30, 2**31, m)
    shift = r.integers(-12, 4, m) if shifts is None else shifts
    return {"C": 0, "M": m, "input_offset": -zp_in, "output_offset": zp_out,
            "output_multiplier": CArray("int32_t", tuple(int(v) for v in mult)),
            "output_shift": CArray("int32_t", tuple(int(v) for v in shift))}


@pytest.mark.parametrize(("c", "m", "zp_in", "zp_out"),
                         [(5, 7, -128, 127), (16, 24, 127, -128), (33, 18, 0, -5),
                          (2, 1, -3, 0), (64, 4, -128, -128)])
def test_layout_is_tflms_sum_and_requantization(c: int, m: int, zp_in: int, zp_out: int
                                                ) -> None:
    """Every pixel of a random layer, weights of +-127 and -128 among them: the kernel's
    reading of the laid-out words gives TFLM's output (the accumulator written out, then
    MultiplyByQuantizedMultiplier, the offset, the clamp)."""
    r = np.random.default_rng(c * 100 + m)
    w = r.integers(-128, 128, (c, m))
    w[0, :] = 127
    w[-1, 0] = -128
    bias = r.integers(-2**16, 2**16, m)
    p = {**_params(r, m, zp_in, zp_out), "C": c}
    words = np.asarray(tvmdev_cm_1x1.pack(w, bias, p)["packed_weights"].values, np.int64)
    assert words.size * 4 == tvmdev_cm_1x1.packed_bytes(m, c)
    mult = np.asarray(p["output_multiplier"].values, np.int64)  # type: ignore[attr-defined]
    shift = np.asarray(p["output_shift"].values, np.int64)  # type: ignore[attr-defined]
    for lo, hi in ((-128, 127), (zp_out, 127), (-100, 50)):
        for x in [np.full(c, -128), np.full(c, 127), *r.integers(-128, 128, (20, c))]:
            acc = ((x - zp_in)[:, None] * w).sum(axis=0) + bias
            want = np.clip(multiply_by_quantized_multiplier(acc, mult, shift) + zp_out, lo, hi)
            assert np.array_equal(_kernel(words, x, m, lo, hi), want)


def test_constant_channels_are_tflms_constant() -> None:
    """MLPerf visual_wake_words' dead channels: a bias near +-2^30 under a scale of about
    2^-31 (output shift -31), whose doubled accumulator does not fit int32, and a shift of
    -27 whose rounding constant with an offset of -128 does not: each output is one value
    for every input, which the record gives; a live channel beside them stays exact."""
    r = np.random.default_rng(5)
    c, zp_in, zp_out = 64, -128, -128
    w = r.integers(-127, 128, (c, 4))
    bias = np.array([2**30 - 2**22, -(2**30) + 2**22, 3000, 1000])
    p = {"C": c, "M": 4, "input_offset": -zp_in, "output_offset": zp_out,
         "output_multiplier": CArray("int32_t", (1518500250, 2**31 - 1, 1895147668, 2**30)),
         "output_shift": CArray("int32_t", (-31, -30, -27, -9))}
    ch = tvmdev_cm_1x1.channels(w, bias, p)
    assert ch.constant.tolist() == [True, True, True, False] and ch.exact.all()
    words = np.asarray(tvmdev_cm_1x1.pack(w, bias, p)["packed_weights"].values, np.int64)
    mult = np.asarray(p["output_multiplier"].values, np.int64)  # type: ignore[attr-defined]
    shift = np.asarray(p["output_shift"].values, np.int64)  # type: ignore[attr-defined]
    for x in [np.full(c, -128), np.full(c, 127), *r.integers(-128, 128, (50, c))]:
        acc = ((x - zp_in)[:, None] * w).sum(axis=0) + bias
        want = np.clip(multiply_by_quantized_multiplier(acc, mult, shift) + zp_out, -128, 127)
        assert np.array_equal(_kernel(words, x, 4, -128, 127), want)


def test_int8_filter_records_are_tflms_arithmetic() -> None:
    """The int8 filter's records (conv1x1_s8.c's tvmk_cm_conv1x1_int8, in int64 numpy: the
    raw int8 sum from the folded bias, scaled by 2^left, SMMULR, the masked rounding):
    TFLM's output for shifts -12 to 3 (right shifts of 0 among them) and a constant
    channel."""
    r = np.random.default_rng(8)
    c, m, zp_in, zp_out = 24, 9, 127, -7
    w = r.integers(-128, 128, (c, m))
    bias = r.integers(-2**16, 2**16, m)
    p = {**_params(r, m, zp_in, zp_out), "C": c}
    shift = np.asarray(p["output_shift"].values, np.int64)  # type: ignore[attr-defined]
    shift[0] = -31
    bias[0] = 2**30 - 2**23
    p["output_shift"] = CArray("int32_t", tuple(int(v) for v in shift))
    mult = np.asarray(p["output_multiplier"].values, np.int64)  # type: ignore[attr-defined]
    assert tvmdev_cm_1x1.channels(w, bias, p).constant[0]
    rec = np.asarray(tvmdev_cm_1x1.pack_int8(w, bias, p)["folded_bias"].values,
                     np.int64).reshape(m, 5)
    for x in [np.full(c, -128), np.full(c, 127), *r.integers(-128, 128, (30, c))]:
        acc = (rec[:, 0] + (x[:, None] * w).sum(axis=0) + 2**31) % 2**32 - 2**31
        scaled = ((acc << rec[:, 2]) + 2**31) % 2**32 - 2**31
        xq = (scaled * rec[:, 1] + 2**31) >> 32
        v = (xq + np.where(rec[:, 4] != 0, xq >> 31, 0) + rec[:, 3]) >> rec[:, 4]
        want = multiply_by_quantized_multiplier(((x - zp_in)[:, None] * w).sum(axis=0) + bias,
                                                mult, shift) + zp_out
        assert np.array_equal(np.clip(v, -128, 127), np.clip(want, -128, 127))


# --- the one-add rounding and offset ---------------------------------------------------

@pytest.mark.parametrize("right", [1, 2, 3, 7, 12, 20, 24])
def test_rounding_and_offset_in_one_add_at_every_boundary(right: int) -> None:
    """(x + (x >> 31) + 2^(right - 1) + offset * 2^right) >> right is TFLM's
    RoundingDivideByPOT(x, right) + offset: for every output offset, at every rounding
    boundary near zero and at the ends of the range the proof allows."""
    offsets = np.arange(-128, 128, dtype=np.int64)
    c = (1 << (right - 1)) + offsets * (1 << right)
    limit = 2**31 - 1 - int(np.abs(c).max()) - 1  # the largest |x| offset_fits allows
    ties = np.concatenate([(np.arange(-300, 301) << right) + d for d in
                           (-(1 << (right - 1)) - 1, -(1 << (right - 1)),
                            -(1 << (right - 1)) + 1, 0, (1 << (right - 1)) - 1,
                            1 << (right - 1), (1 << (right - 1)) + 1)])
    ends = np.concatenate([limit - np.arange(512), -limit + np.arange(512)])
    x = np.unique(np.concatenate([np.arange(-4096, 4097), ties, ends]).clip(-limit, limit))
    want = rounding_divide_by_pot(x[:, None], right) + offsets[None, :]
    total = x[:, None] + (x[:, None] >> 63) + c[None, :]
    assert total.min() >= -(2**31) and total.max() < 2**31  # no int32 overflow
    assert np.array_equal(total >> right, want)


def test_offset_fits_at_its_edge() -> None:
    """The bound at which the sum may leave int32 is declined, one below it is not: an
    output offset of 127 at right shift 23 (c = 2^22 + 127 * 2^23) leaves 2^31 - 1 - c for
    the SMMULR result, which a multiplier of 2^31 - 1 reaches at a doubled accumulator
    bound of ceil(that much * 2^32 / (2^31 - 1)) / 2."""
    one = (np.array([1]), np.array([2**31 - 1]), np.array([(1 << 22) + 127 * (1 << 23)]))
    room = 2**31 - 1 - int(one[2][0])
    ok = [b for b in range(room - 2, room + 3)
          if tvmdev_cm_1x1.offset_fits(np.array([b], np.int64), *one)]
    edge = max(ok)
    assert (2 * edge * (2**31 - 1) + 2**31) >> 32 == room
    assert not tvmdev_cm_1x1.offset_fits(np.array([edge + 1], np.int64), *one)


# --- what it takes, and the flash budget -------------------------------------------------

def _compile(tmp_path: Path, flash: int | None = None, cases: list | None = None) -> object:
    """``cases`` (default: PW_CASES) merged into one model, planned on mps2_an386 without
    CMSIS-NN, with ``flash`` as tvmdev_cm's budget when given."""
    import cm_cases

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    model, _ = cm_cases.merged(cm_cases.PW_CASES if cases is None else cases)
    (tmp_path / "m.tflite").write_bytes(model)
    board = board_by_name("mps2_an386")
    if flash is not None:
        board = dataclasses.replace(board, library_flash=(("tvmdev_cm", flash),))
    return compile_model(import_file(tmp_path / "m.tflite").to_model(), board,
                         Options(trees=(("cmsis_nn", "off"),)))


def test_which_1x1_convolutions_it_takes(tmp_path: Path) -> None:
    """PW_CASES on mps2_an386: every one; each one's scratch is its pixel widened, and its
    params the laid-out words."""
    c = _compile(tmp_path)
    ops = c.model.operators  # type: ignore[attr-defined]
    placements = c.placements  # type: ignore[attr-defined]
    assert [placements[op.index].library for op in ops] == ["tvmdev_cm"] * 12
    first = next(p for p in c.ops if p.index == 0)  # type: ignore[attr-defined]
    assert first.scratch[1] == 32 * 4  # 16 input channels: 4 quads, 4 pixels of 2 words
    assert len(first.params["packed_weights"].values) * 4 == tvmdev_cm_1x1.packed_bytes(24, 16)


def test_a_left_shift_beyond_int16_is_declined() -> None:
    """Output shift 7 scales the filter by 2^8 (128 x 2^8 is int16's edge); 8 is declined
    (before anything reads the model)."""
    p = {**_params(np.random.default_rng(1), 2, 0, 0, np.array([-3, 8])), "C": 4,
         "pad_top": 0, "pad_left": 0}
    w = np.full((4, 2), -128)
    assert tvmdev_cm_1x1.decline(None, None, p, w, None, 0) == (  # type: ignore[arg-type]
        "an output shift of 8 in channel 1 (tvmdev_cm's 1x1 scales its int16 filter by "
        "2^(shift + 1), at most 2^8)")
    p["output_shift"] = CArray("int32_t", (-3, 7))
    words = tvmdev_cm_1x1.pack(w, None, p)["packed_weights"].values
    assert min(_halves(np.asarray(words[4:12]))[0]) == -32768  # -128 x 2^8


def test_past_the_flash_budget_the_filter_stays_int8(tmp_path: Path) -> None:
    """A budget of the first two layers' words: the later ones keep their int8 filter
    (records only in folded_bias), those with input channels not a multiple of 4 go on,
    saying why."""
    import cm_cases
    m = _compile(tmp_path, 0).model  # type: ignore[attr-defined]
    two = sum(tvmdev_cm_1x1.added_bytes(m, op) for op in m.operators[:2])
    c = _compile(tmp_path, two)
    placements = c.placements  # type: ignore[attr-defined]
    ops = {p.index: p for p in c.ops}  # type: ignore[attr-defined]
    libs = [placements[op.index].library for op in c.model.operators]  # type: ignore
    assert libs == ["tvmdev_cm" if i < 2 or d.c % 4 == 0 else "portable"
                    for i, d in enumerate(cm_cases.PW_CASES)]
    need = tvmdev_cm_1x1.added_bytes(m, m.operators[2])
    assert placements[2].declined == (
        f"tvmdev_cm: its filter widened adds {need} bytes, beyond the board's flash budget "
        f"(0 of {two} bytes left: library_flash: tvmdev_cm), and 3 input channels (its int8 "
        "filter's rows are read in words)")
    assert ops[1].params["packed_weights"] is not None
    assert ops[3].params["packed_weights"] is None  # 12 input channels: int8
    assert len(ops[3].params["folded_bias"].values) == 5 * 10
    assert ops[3].scratch[1] == 32 * 3  # four pixels of three quads


def test_a_board_without_a_budget_keeps_int8_filters(tmp_path: Path) -> None:
    import cm_cases
    c = _compile(tmp_path, 0)
    assert [c.placements[op.index].library  # type: ignore[attr-defined]
            for op in c.model.operators] == [  # type: ignore[attr-defined]
        "tvmdev_cm" if d.c % 4 == 0 else "portable" for d in cm_cases.PW_CASES]


def test_a_widened_filter_is_emitted_once(tmp_path: Path) -> None:
    """A widened 1x1's filter and bias are in its packed words only: the executor passes
    NULL for them and emits neither array (nor counts it in flash); an int8 filter's
    layer keeps its filter and drops its bias (in its records)."""

    from tvmdev.plan.fit import constant_bytes
    from tvmdev.render.executor import executor_files

    m0 = _compile(tmp_path, 0).model  # type: ignore[attr-defined]
    two = sum(tvmdev_cm_1x1.added_bytes(m0, op) for op in m0.operators[:2])
    c = _compile(tmp_path, two)
    m = c.model  # type: ignore[attr-defined]
    wide, narrow = m.operators[0], m.operators[3]
    assert {(0, 1), (0, 2), (3, 2)} <= m.replaced and (3, 1) not in m.replaced
    laid = m.replaced_constants
    assert {wide.inputs[1], wide.inputs[2], narrow.inputs[2]} <= laid
    assert narrow.inputs[1] not in laid
    emitted = sum(int(a.nbytes) for n, a in m.constants.items() if n not in m.unread_constants)
    assert constant_bytes(m) == emitted
    assert emitted < sum(int(a.nbytes) for a in m.constants.values())
    source = next(f.content for f in executor_files(c, "t")  # type: ignore[arg-type]
                  if f.path.endswith(".c"))
    for name in (wide.inputs[1], wide.inputs[2], narrow.inputs[2]):
        assert f"const_{m.tensors[name].cname}[" not in source
    assert f"const_{m.tensors[narrow.inputs[1]].cname}[" in source


# --- on the boards (emulated) -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps2_an500"])
def test_1x1_edges_bit_exact_with_tflm(board: str, cli: Callable[..., Result],
                                       tmp_path: Path) -> None:
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model, arrays = cm_cases.merged(cm_cases.PW_CASES)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board", board,
                                  "--cmsis-nn", "off")
    assert outputs == len(cm_cases.PW_CASES)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"]].count("tvmdev_cm") == 12


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps2_an500"])
def test_int8_filter_edges_bit_exact_with_tflm(board: str, cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    """The board with no flash budget (its YAML copied, library_flash 0): every case with
    a multiple of 4 input channels on the int8 filter, four pixels at a time (odd pixel
    counts leave a short tile), TFLM's outputs."""
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm

    from tvmdev.load.board import board_by_name
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    text = board_by_name(board).path.read_text()
    assert "library_flash: {tvmdev_cm: 32768}" in text
    (tmp_path / "b.yaml").write_text(text.replace("library_flash: {tvmdev_cm: 32768}",
                                                  "library_flash: {tvmdev_cm: 0}"))
    model, arrays = cm_cases.merged(cm_cases.PW_CASES)
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board",
                                  str(tmp_path / "b.yaml"), "--cmsis-nn", "off")
    assert outputs == len(cm_cases.PW_CASES)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"]] == [
        "tvmdev_cm" if d.c % 4 == 0 else "portable" for d in cm_cases.PW_CASES]


@pytest.mark.slow
def test_keyword_spotting_bit_exact_with_its_pointwise_on_tvmdev_cm(
        tflite_model: Callable[[str], Path], cli: Callable[..., Result],
        tmp_path: Path) -> None:
    """keyword_spotting (DS-CNN) on the Cortex-M4: its four 1x1 convolutions (and its
    10x4 first one, tvmdev_cm's general kernel) on tvmdev_cm, every output TFLM's."""
    from test_cmsis_nn import tree
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model("keyword_spotting.tflite")
    assert run_bit_exact(cli, model, tmp_path, "mps2_an386",
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY["keyword_spotting"]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert [o["library"] for o in plan["operators"] if o["op"] == "conv2d"] == [
        "tvmdev_cm"] * 5
