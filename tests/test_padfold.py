"""PAD first (issue 25): a PAD folded into the convolution, depthwise convolution or max
pool that reads it (tvmdev/plan/padfold.py), checked against TFLM's interpreter.

The models (tests/padfold_cases.py) hold one branch per rule and per refusal. What is
checked: which PADs fold and why the others do not; the folded model's outputs, from
tvmdev's reference and from the C kernels (portable on the host, CMSIS-NN on Cortex-M4
and M55), are TFLM's bit for bit (int8) or equal to the unfolded model's (float32,
whose reference differs from TFLM's summation order by ulps either way); the fold shows
in plan.json and in ``tvmdev aot``'s output, ``--no-fold-pads`` keeps every PAD; and on
MCUNet VWW the workspace no longer holds a tensor and its padded copy together.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import padfold_cases as pc
import pytest
import tflm_ref
from conftest import Result, need_tool

from tvmdev.model.graph import Model, Operator


def _model(tmp_path: Path, dtype: str) -> tuple[Path, Model]:
    from tvmdev.frontends.importer import import_file
    path = tmp_path / f"{dtype}.tflite"
    path.write_bytes(pc.model(dtype))
    return path, import_file(path).to_model()


def _readers(m: Model) -> dict[str, list[Operator]]:
    readers: dict[str, list[Operator]] = {}
    for op in m.operators:
        for t in dict.fromkeys(op.inputs):
            if t is not None:
                readers.setdefault(t, []).append(op)
    return readers


@pytest.mark.parametrize("dtype", sorted(pc.BRANCHES))
def test_which_pads_fold_and_why_not(dtype: str, tmp_path: Path) -> None:
    """Each branch's PAD folds into its reader, or stays with the reason of its rule;
    a folded model has no PAD left of those, and the reader reads the PAD's input."""
    from tvmdev.plan.padfold import decline, fold_pads
    _, m = _model(tmp_path, dtype)
    folded, folds = fold_pads(m)
    readers = _readers(m)
    branches = pc.BRANCHES[dtype]
    assert sorted(folds) == sorted(f"{b.name}_y" for b in branches if b.folds)
    for b in branches:
        pad = next(op for op in m.operators if op.outputs[0] == f"{b.name}_padded")
        reader, why = decline(m, pad, readers)
        assert (reader is not None, why) == (b.folds, b.why), b.name
    kept = {op.outputs[0] for op in folded.operators if op.op == "pad"}
    assert kept == {f"{b.name}_padded" for b in branches if not b.folds}
    for op in folded.operators:
        assert [i for i in op.inputs if i is not None] == [
            i for i in op.inputs if i in folded.tensors or i is None]
    assert [op.index for op in folded.operators] == list(range(len(folded.operators)))


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_folded_reference_is_tflm_bit_for_bit(dtype: str, tmp_path: Path) -> None:
    """int8 and int16: every output of the folded model, as tvmdev's reference computes
    it from the folded readers' params, is TFLM's (int8: on every input value)."""
    from tvmdev.model.reference import evaluate
    from tvmdev.plan.padfold import fold_pads
    path, m = _model(tmp_path, dtype)
    folded, folds = fold_pads(m)
    assert folds
    xs = pc.inputs(dtype)
    want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
    got = evaluate(folded, {m.inputs[0]: xs[0]})
    for name, w in zip(m.outputs, want, strict=True):
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
        assert len(np.unique(w)) > 10, name  # not a constant output


def test_folded_float_reference_equals_unfolded(tmp_path: Path) -> None:
    """float32: the folded model computes the unfolded model's values exactly (a skipped
    tap adds 0.0 times a finite weight), and both are TFLM's within its summation order."""
    from tvmdev.model.reference import evaluate
    from tvmdev.plan.padfold import fold_pads
    path, m = _model(tmp_path, "float32")
    folded, folds = fold_pads(m)
    assert len(folds) == 3
    xs = pc.inputs("float32")
    want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
    got = evaluate(folded, {m.inputs[0]: xs[0]})
    before = evaluate(m, {m.inputs[0]: xs[0]})
    for name, w in zip(m.outputs, want, strict=True):
        assert np.array_equal(got[name], before[name]), name
        assert np.allclose(got[name], w, rtol=1e-5, atol=1e-5), name


def test_aot_notes_each_fold_and_the_option_keeps_them(cli: Callable[..., Result],
                                                         tmp_path: Path) -> None:
    """plan.json notes the fold on the reader, aot lists it; with --no-fold-pads every
    PAD is an operator again, and the banner's command says so."""
    branches = pc.INT8_BRANCHES[:2] + pc.INT8_BRANCHES[-2:]
    path = tmp_path / "int8.tflite"
    path.write_bytes(pc.model("int8", branches))
    plans = {}
    for label, extra in (("fold", ()), ("keep", ("--no-fold-pads",))):
        r = cli("aot", str(path), "-o", str(tmp_path / label), *extra)
        assert r.code == 0, r.err
        plans[label] = json.loads(next((tmp_path / label).glob("*_plan.json")).read_text())
        folded = [b for b in branches if b.folds]
        listed = [f"{b.name}_padded into {b.name}_y" for b in folded]
        assert (("pads folded into their readers: " + ", ".join(listed)) in r.out) == (
            label == "fold"), r.out
    notes = {op["name"]: op.get("note") for op in plans["fold"]["operators"]}
    for b in branches:
        assert notes[f"{b.name}_y"] == (f"pad folded from {b.name}_padded" if b.folds
                                         else None)
    assert not any("note" in op for op in plans["keep"]["operators"])
    pads = [[op for op in plans[k]["operators"] if op["op"] == "pad"] for k in plans]
    assert len(pads[1]) - len(pads[0]) == sum(b.folds for b in branches) == 2
    assert "--no-fold-pads" in (tmp_path / "keep/tvmgen_int8.c").read_text()


def _run(cli: Callable[..., Result], path: Path, m: Model, arrays: list[np.ndarray],
         tmp_path: Path, *options: str) -> dict[str, np.ndarray]:
    (tmp_path / "in").mkdir(parents=True)
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return {n: np.load(tmp_path / "out" / f"{n}.npy") for n in m.outputs}


@pytest.mark.slow
def test_folded_kernels_on_the_host(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The portable kernels with the folded padding: int8 and int16 outputs TFLM's bit
    for bit, float32 ones the same bytes as with every PAD kept."""
    need_tool("gcc", "apt install gcc")
    for dtype in pc.BRANCHES:
        path, m = _model(tmp_path, dtype)
        xs = pc.inputs(dtype)
        got = _run(cli, path, m, xs, tmp_path / dtype)
        if dtype != "float32":
            want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
            for name, w in zip(m.outputs, want, strict=True):
                assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
        else:
            kept = _run(cli, path, m, xs, tmp_path / "kept", "--no-fold-pads")
            for name in m.outputs:
                assert got[name].tobytes() == kept[name].tobytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_folded_on_cmsis_nn(dtype: str, board: str, cli: Callable[..., Result],
                            tmp_path: Path) -> None:
    """CMSIS-NN's convolution, depthwise and max pool kernels (int8 and 16x8) with the
    folded padding, and arm_pad_s8 for the int8 PADs that stay, in QEMU: every output
    TFLM's."""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    from test_cmsis_nn import tree
    path, m = _model(tmp_path, dtype)
    xs = pc.inputs(dtype)
    got = _run(cli, path, m, xs, tmp_path, "--board", board, "--cmsis-nn", tree())
    want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
    for name, w in zip(m.outputs, want, strict=True):
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert {op["library"] for op in plan["operators"] if op["op"] == "pad"} == (
        {"cmsis_nn"} if dtype == "int8" else {"portable"})


@pytest.mark.slow
def test_mcunet_vww_drops_the_padded_copies() -> None:
    """MCUNet VWW (TinyEngine's tree): its four PADs fold, so none is left, and the
    workspace is smaller than with them kept (issue 24: a tensor and its padded copy
    were alive together)."""
    from test_tflite_field_ops import field_model

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    m = import_file(field_model("vww")).to_model()
    board = board_by_name("mps2_an386")
    arenas = {}
    for fold in (True, False):
        c = compile_model(m, board, Options(trees=(("cmsis_nn", "off"),), fold_pads=fold))
        arenas[fold] = c.memory.arena_size
        pads = [op for op in c.model.operators if op.op == "pad"]
        assert (len(pads), len(c.folds)) == ((0, 4) if fold else (4, 0))
    assert arenas[True] < arenas[False]
