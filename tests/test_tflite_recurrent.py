"""SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM, whose variable tensors are the model's state,
against TFLM's interpreter: seeded one-op models (tests/tflite_recurrent_cases.py) over
three consecutive invocations, and after a reset, through tvmdev's numpy reference
(fast) and through ``tvmdev run --iterations 2`` on the host (slow; the harness resets
each workspace, so an int8 state whose zero point is not 0 checks the reset); TFLM's
LSTM models and DTLN bit-exact over two invocations, on the host and on mps3_an547; the
LSTM variants TFLM refuses, refused in one line; and the state's place in the plan."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import tflite_recurrent_cases as rc
import tflm_ref
from conftest import Result, need_module, need_tool

from tvmdev.frontends.tflite import TfGraph, TfOp
from tvmdev.model.graph import Model
from tvmdev.run.compare import ATOL, RTOL

need_module("tflite", "pip install -e '.[tflite]'")

CASES = {c.label: c for c in rc.cases()}
MODELS = {"trained_lstm": "examples/mnist_lstm/trained_lstm.tflite",
          "trained_lstm_int8": "examples/mnist_lstm/trained_lstm_int8.tflite",
          "dtln": "examples/dtln/dtln_noise_suppression.tflite"}


def _same(got: np.ndarray, want: np.ndarray, int8: bool) -> bool:
    if got.shape != want.shape:
        return False
    if int8:
        return got.dtype == want.dtype and np.array_equal(got, want)
    return bool(np.allclose(got, want, atol=ATOL, rtol=RTOL))


def _tflm(data: bytes, invocations: list[list[np.ndarray]], reset_after: int | None = None
          ) -> list[np.ndarray]:
    """TFLM's output of each invocation in a row (``reset_after``: reset the variable
    tensors after that many)."""
    rt = tflm_ref.runtime()
    interp = rt.Interpreter.from_bytes(data, arena_size=1 << 20)
    out = []
    for k, arrays in enumerate(invocations):
        if k == reset_after:
            interp.reset()
        for i, x in enumerate(arrays):
            interp.set_input(x, i)
        interp.invoke()
        out.append(interp.get_output(0))
    return out


def _import(data: bytes, tmp_path: Path) -> Model:
    """The model of the .tflite ``data``; skips, saying why, for an LSTM tvmdev cannot
    load because no tree holds TFLM's int16 sigmoid table (tvmdev ships no copy:
    lstm_table.py)."""
    from tvmdev.errors import TvmdevError
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.s8.lstm_table import SOURCES, sigmoid_table
    from tvmdev.model.shapes import ShapeError
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    imported = import_file(path)
    try:
        return imported.to_model()
    except TvmdevError:
        try:
            sigmoid_table()
        except ShapeError:
            if "UNIDIRECTIONAL_SEQUENCE_LSTM" in imported.summary:
                pytest.skip("an int8 LSTM needs TFLM's int16 sigmoid table: set "
                            + " or ".join(var for var, _ in SOURCES) + " to its tree")
        raise


@pytest.mark.parametrize("label", sorted(CASES))
def test_reference_carries_state_as_tflm(label: str, tmp_path: Path) -> None:
    """Three invocations in a row, each output TFLM's (int8 bit for bit); a reset, then
    the first invocation's inputs again: TFLM's first output again, and the reference's
    from a fresh state. The outputs vary from one invocation to the next (the state
    matters) and over their range."""
    from tvmdev.model.reference import evaluate
    case = CASES[label]
    m = _import(case.data, tmp_path)
    state: dict[str, np.ndarray] = {}
    got = [evaluate(m, dict(zip(m.inputs, a, strict=True)), state=state)[m.outputs[0]]
           for a in case.invocations]
    want = _tflm(case.data, case.invocations)
    assert [k for k in range(3) if not _same(got[k], want[k], case.int8)] == []
    assert set(state) == set(m.states) and len(m.states) in (1, 2)
    again = _tflm(case.data, [*case.invocations[:2], case.invocations[0]], reset_after=2)
    fresh = evaluate(m, dict(zip(m.inputs, case.invocations[0], strict=True)))
    assert _same(again[2], want[0], case.int8)
    assert _same(fresh[m.outputs[0]], again[2], case.int8)
    assert not np.array_equal(want[1], want[0]) or not np.array_equal(want[2], want[1])
    assert len(np.unique(np.concatenate([w.ravel() for w in want]))) > 8


@pytest.mark.slow
@pytest.mark.parametrize("label", sorted(CASES))
def test_run_two_invocations_matches_tflm(label: str, cli: Callable[..., Result],
                                          tmp_path: Path) -> None:
    """``tvmdev run --iterations 2`` on the host (the C kernels, the state in the
    workspace, the harness's reset): the output of the second invocation is TFLM's
    after two invocations on the same inputs."""
    need_tool("gcc", "apt install gcc")
    case = CASES[label]
    got = _run(cli, case.data, case.invocations[0], tmp_path, "--iterations", "2")
    want = _tflm(case.data, [case.invocations[0]] * 2)
    assert _same(got, want[1], case.int8)
    assert not np.array_equal(want[1], want[0])


def _run(cli: Callable[..., Result], data: bytes, arrays: list[np.ndarray], tmp_path: Path,
         *options: str) -> np.ndarray:
    """``tvmdev run`` of ``data`` on ``arrays`` (which must PASS against the reference):
    its one output."""
    m = _import(data, tmp_path)
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(tmp_path / "m.tflite"), "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"),
            *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    out: np.ndarray = np.load(tmp_path / "out" / f"{m.outputs[0]}.npy")
    return out


# --- the LSTM variants TFLM refuses ---------------------------------------------------------

@pytest.mark.parametrize("operand,detail", [
    (9, "peephole: TFLM runs the standard LSTM only"),
    (16, "projection: TFLM runs the standard LSTM only"),
    (21, "layer norm: TFLM runs the standard LSTM only"),
    (-1, "no input gate (CIFG): TFLM runs the standard LSTM only")])
def test_lstm_variants_are_refused(operand: int, detail: str, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(rc.lstm_variant(11, operand))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1 and r.err.splitlines()[0] == (
        f"tvmdev: {model}: 1 unsupported operator: UNIDIRECTIONAL_SEQUENCE_LSTM ({detail}) "
        "x1 (first: operator 0 'y')")


# --- the state in the plan and the executor -------------------------------------------------

def test_state_has_its_own_region(tmp_path: Path) -> None:
    """Each state tensor lies in the state region at the end of the workspace, which no
    tensor or scratch buffer meets, and is counted in the arena and its lower bound; the
    executor declares the reset functions and fills an int8 state with its zero point."""
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    from tvmdev.render.executor import executor_files
    case = CASES["svdf s8 batch 2 rank 1"]
    m = _import(case.data, tmp_path)
    compiled = compile_model(m, board_by_name("host"))
    mem = compiled.memory
    start, size = mem.state_region
    assert [s.name for s in mem.states] == list(m.states) and size > 0
    assert start + size == mem.arena_size
    others = [b for b in mem.buffers if not b.persistent]
    assert others and all(b.offset + b.size <= start for b in others)
    state = next(b for b in mem.buffers if b.persistent)
    assert mem.lower_bound >= state.size + max(b.size for b in others)
    zero_point = m.tensors[m.states[0]].quant.zero_point[0]
    assert zero_point != 0 and mem.states[0].fill == zero_point & 0xFF
    files = {f.path: f.content for f in executor_files(compiled, "test")}
    header, source = files["tvmgen_m.h"], files["tvmgen_m.c"]
    assert "int32_t tvmgen_m_reset(void);" in header
    assert "int32_t tvmgen_m_reset_workspace(void *workspace);" in header
    assert f"= 0x{zero_point & 0xFF:02x}U;" in source


def test_stateless_models_get_no_reset(tmp_path: Path) -> None:
    """A model without state keeps the executor it had: no state region, no reset."""
    from s8_cases import merged
    from tflite_field_cases import cases

    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    from tvmdev.render.executor import executor_files
    data, _ = merged(cases("hard_swish", "int8")[:1])
    compiled = compile_model(_import(data, tmp_path), board_by_name("host"))
    assert compiled.memory.states == () and compiled.memory.state_region[1] == 0
    assert all("reset" not in f.content for f in executor_files(compiled, "test"))


@pytest.mark.slow
def test_params_are_the_structs_fields(tmp_path: Path) -> None:
    """The params generation computes for every SVDF and LSTM form are exactly the fields
    of its C struct in tvmk_recurrent.h (read with pycparser), scratch aside."""
    from test_params_structs import SCRATCH, struct_fields

    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    fields = struct_fields()
    seen = set()
    for case in CASES.values():
        compiled = compile_model(_import(case.data, tmp_path), board_by_name("host"))
        for prep in compiled.ops:
            assert prep.takes_scratch and prep.scratch[1] > 0
            assert sorted((*prep.params, *SCRATCH)) == sorted(fields[prep.struct])
            seen.add(prep.struct)
    assert seen == {"tvmk_svdf_params", "tvmk_svdf_s8_params", "tvmk_lstm_params",
                    "tvmk_lstm_s8_params"}


# --- TFLM's LSTM models -------------------------------------------------------------------

def _field(name: str) -> Path:
    root = os.environ.get("TFLM_SOURCE_DIR")
    if not root:
        pytest.skip(f"TFLM_SOURCE_DIR is not set: TFLM's tree (github.com/tensorflow/"
                    f"tflite-micro) holds {Path(MODELS[name]).name}; check it out and set it")
    path = Path(root) / "tensorflow/lite/micro" / MODELS[name]
    assert path.is_file(), f"TFLM_SOURCE_DIR={root} has no {MODELS[name]}"
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_field_lstm_models_on_host(name: str, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    """Two invocations of different inputs through the reference, and two of the same
    through ``tvmdev run`` on the host: each output TFLM's (int8 bit for bit)."""
    from tvmdev.model.reference import evaluate, random_inputs
    path = _field(name)
    data = path.read_bytes()
    m = _import(data, tmp_path)
    int8 = m.tensors[m.outputs[0]].dtype == "int8"
    invocations = [list(random_inputs(m, k).values()) for k in (0, 1)]
    want = _tflm(data, invocations)
    state: dict[str, np.ndarray] = {}
    for arrays, w in zip(invocations, want, strict=True):
        got = evaluate(m, dict(zip(m.inputs, arrays, strict=True)), state=state)
        assert _same(got[m.outputs[0]], w, int8)
    got = _run(cli, data, invocations[0], tmp_path, "--iterations", "2")
    assert _same(got, _tflm(data, [invocations[0]] * 2)[1], int8)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["trained_lstm_int8", "dtln"])
def test_field_lstm_models_on_mps3_an547(name: str, cli: Callable[..., Result],
                                         tmp_path: Path) -> None:
    """The int8 LSTM models on the Cortex-M55 board, in QEMU: one invocation from the
    reset state, the output TFLM's bit for bit."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    from tvmdev.model.reference import random_inputs
    path = _field(name)
    data = path.read_bytes()
    m = _import(data, tmp_path)
    arrays = list(random_inputs(m, 1).values())
    got = _run(cli, data, arrays, tmp_path, "--board", "mps3_an547")
    assert np.array_equal(got, _tflm(data, [arrays])[0])


@pytest.mark.slow
@pytest.mark.parametrize("label", ["svdf s16 batch 1 rank 1", "svdf s16 batch 2 rank 2",
                                   "svdf s8 batch 2 rank 1"])
def test_svdf_on_mps3_an547(label: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """An int8 SVDF on the Cortex-M55 board, in QEMU, from the reset state: with int16
    state through CMSIS-NN's arm_svdf_state_s16_s8 (where CMSIS_NN_SOURCE_DIR names its
    tree), with int8 state (zero point not 0) through the portable kernel; TFLM's
    output bit for bit."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    case = CASES[label]
    got = _run(cli, case.data, case.invocations[0], tmp_path, "--board", "mps3_an547")
    assert np.array_equal(got, _tflm(case.data, case.invocations[:1])[0])
    plan = (tmp_path / "build/model/tvmgen_m_plan.json").read_text()
    cmsis = "s16" in label and bool(os.environ.get("CMSIS_NN_SOURCE_DIR"))
    assert ('"tvmk_cmsis_nn_svdf_s8_s16"' in plan) == cmsis


@pytest.mark.parametrize("label", ["svdf s8 batch 2 rank 1", "lstm int8 batch 3 time-major "
                                   "clip 0.5"])
def test_states_round_trip_through_the_description(label: str, cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    """``tvmdev import`` writes the states under ``states:`` (the C names after their
    operator and argument); the description loads back into a model with the same states
    that computes the same two invocations."""
    from tvmdev.load.model import load_model
    from tvmdev.model.reference import evaluate
    case = CASES[label]
    m = _import(case.data, tmp_path)
    r = cli("import", str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    again = load_model(tmp_path / "o" / "m.yaml")
    assert again.states == m.states and "states:" in (tmp_path / "o" / "m.yaml").read_text()
    assert [m.tensors[s].cname for s in m.states] in (
        [f"{m.operators[0].cname}_state"],
        [f"{m.operators[0].cname}_output_state", f"{m.operators[0].cname}_cell_state"])
    for model in (m, again):
        state: dict[str, np.ndarray] = {}
        outs = [evaluate(model, dict(zip(model.inputs, a, strict=True)), state=state)[
            model.outputs[0]] for a in case.invocations[:2]]
        assert all(np.array_equal(o, w) for o, w in
                   zip(outs, _tflm(case.data, case.invocations[:2]), strict=True))


def test_a_state_read_as_an_input_is_refused(tmp_path: Path) -> None:
    """A state is only its operator's state argument: described as another operator's
    input, the model is refused in one line."""
    from tvmdev.errors import TvmdevError
    from tvmdev.load.model import load_model
    (tmp_path / "m.yaml").write_text(
        "name: m\ninputs:\n  x: {shape: [1, 4], dtype: float32}\n"
        "outputs:\n  y: {shape: [1, 4], dtype: float32}\n"
        "states:\n  s: {shape: [1, 4], dtype: float32}\n"
        "operators:\n  - {name: a, op: add, inputs: [x, s], outputs: [y]}\n")
    with pytest.raises(TvmdevError) as e:
        load_model(tmp_path / "m.yaml")
    assert str(e.value) == (f"{tmp_path / 'm.yaml'}:9: operator 'a' reads state 's' as B; a "
                            "state is only an operator's state argument")


# --- the SVDFs of TFLM's keyword model ------------------------------------------------------

KEYWORD = {"keyword_scrambled": "models/keyword_scrambled.tflite",
           "keyword_scrambled_8bit": "models/keyword_scrambled_8bit.tflite"}


def _svdf_alone(g: TfGraph, op: TfOp) -> bytes:
    """One SVDF of a TFLite graph (``tvmdev.frontends.tflite.read``) as a one-op model:
    its constants and quantizations as they are, its input a model input."""
    import tflite
    from tflite_build import Graph, Op, T, build

    code = {"float32": 0, "int32": 2, "int16": 7, "int8": 9}
    ts = []
    for j in (*op.inputs, op.outputs[0]):
        t = g.tensors[j]
        quant = (list(t.quant.scale), list(t.quant.zero_point)) if t.quant else None
        ts.append(T(t.cname, list(t.shape), t.data, type=code[t.dtype], quant=quant,
                    variable=t.variable))
    opts = tflite.SVDFOptions()
    table = op.raw.BuiltinOptions()
    opts.Init(table.Bytes, table.Pos)
    options = ("SVDFOptions", {"Rank": opts.Rank(),
                               "FusedActivationFunction": opts.FusedActivationFunction()})
    return build(Graph(ts, [Op(rc.SVDF, [0, 1, 2, 3, 4], [5], options)], [0], [5]))


def _keyword(name: str) -> tuple[bytes, TfGraph, list[TfOp], list[dict[int, np.ndarray]]]:
    """The keyword model's bytes, graph and SVDFs, and every SVDF's input, state and
    output tensors in TFLM over two invocations of the whole model."""
    from tvmdev.frontends.tflite import read
    root = os.environ.get("TFLM_SOURCE_DIR")
    if not root:
        pytest.skip("TFLM_SOURCE_DIR is not set: TFLM's tree holds the keyword model")
    path = Path(root) / "tensorflow/lite/micro" / KEYWORD[name]
    data = path.read_bytes()
    g = read(path, data)
    svdfs = [op for op in g.ops if op.kind == "SVDF"]
    rt = tflm_ref.runtime()
    interp = rt.Interpreter.from_bytes(data, intrepreter_config=rt.InterpreterConfig
                                       .kPreserveAllTensors)
    r = np.random.default_rng(3)
    seen: list[dict[int, np.ndarray]] = []
    for _ in range(2):
        interp.set_input(r.integers(-32768, 32768, (1, 96)).astype(np.int16), 0)
        interp.invoke()
        seen.append({j: np.asarray(interp.GetTensor(j, 0)["tensor_data"]).copy()
                     for op in svdfs for j in (op.inputs[0], op.inputs[4], op.outputs[0])})
    return data, g, svdfs, seen


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps3_an547"])
def test_keyword_model_svdfs_run(board: str, cli: Callable[..., Result],
                                 tmp_path: Path) -> None:
    """The keyword model's first and last SVDFs alone through ``tvmdev run`` (their
    int32 sums wrap, as TFLM's do), given TFLM's input: on the host, two invocations
    (--iterations 2) of the first invocation's input; on mps3_an547 (CMSIS-NN's
    arm_svdf_state_s16_s8 with the tree), one. The output is the reference's, which is
    TFLM's (test_keyword_model_svdfs_match_tflm)."""
    from tvmdev.model.reference import evaluate
    need_tool("gcc", "apt install gcc")
    _, g, svdfs, seen = _keyword("keyword_scrambled")
    for k in (0, len(svdfs) - 1):
        op = svdfs[k]
        data = _svdf_alone(g, op)
        (tmp_path / str(k)).mkdir()
        m = _import(data, tmp_path / str(k))
        x = seen[0][op.inputs[0]].reshape(m.tensors[m.inputs[0]].shape)
        runs = 2 if board == "host" else 1
        options = ("--iterations", "2") if board == "host" else ("--board", board)
        got = _run(cli, data, [x], tmp_path / str(k), *options)
        state: dict[str, np.ndarray] = {}
        for _ in range(runs):
            want = evaluate(m, {m.inputs[0]: x}, state=state)[m.outputs[0]]
        assert np.array_equal(got, want)


@pytest.mark.parametrize("name", sorted(KEYWORD))
def test_keyword_model_svdfs_match_tflm(name: str, tmp_path: Path) -> None:
    """Each SVDF of TFLM's keyword model (int16 input and QUANTIZE are another matter),
    over two invocations of the whole model in TFLM, every tensor kept: the SVDF alone,
    imported by tvmdev and given TFLM's input of it, computes TFLM's output (bit for bit)
    at each invocation, and leaves TFLM's state, carried from the first to the second."""
    from tvmdev.model.reference import evaluate
    _, g, svdfs, seen = _keyword(name)
    assert len(svdfs) == 7
    for k, op in enumerate(svdfs):
        (tmp_path / str(k)).mkdir()
        m = _import(_svdf_alone(g, op), tmp_path / str(k))
        state: dict[str, np.ndarray] = {}
        for tensors in seen:
            x = tensors[op.inputs[0]].reshape(m.tensors[m.inputs[0]].shape)
            got = evaluate(m, {m.inputs[0]: x}, state=state)[m.outputs[0]]
            want = tensors[op.outputs[0]].reshape(got.shape)
            assert np.array_equal(got, want), (k, np.count_nonzero(got != want))
            kept = tensors[op.inputs[4]].reshape(state[m.states[0]].shape)
            assert np.array_equal(state[m.states[0]], kept), k
    # the 8-bit model's scrambled weights saturate its outputs; its states vary
    states = np.concatenate([t[op.inputs[4]].ravel() for t in seen for op in svdfs])
    assert len(np.unique(states)) > 100


def test_the_fit_counts_the_state(cli: Callable[..., Result], tmp_path: Path) -> None:
    """A board too small for a model with state says how much of the RAM is the state,
    beside the arena; aot prints it and plan.json records its region."""
    from tvmdev.errors import TvmdevError
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.fit import check_fit
    from tvmdev.plan.pipeline import compile_model
    m = _import(CASES["lstm int8 batch 3 time-major clip 0.5"].data, tmp_path)
    compiled = compile_model(m, board_by_name("host"))
    board = board_by_name("mps2_an386")
    assert board.memory is not None
    small = replace(board.memory, ram=replace(board.memory.ram, length=64), extra=())
    with pytest.raises(TvmdevError) as e:
        check_fit(m, compiled.memory, replace(board, memory=small))
    start, size = compiled.memory.state_region
    assert f"arena {start:,} + state {size:,} + outputs" in str(e.value)
    r = cli("aot", str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o"))
    assert r.code == 0 and f"; state {size} of it;" in r.out, r.out + r.err
    plan = (tmp_path / "o" / "tvmgen_m_plan.json").read_text()
    assert f'"state": {{"offset": {start}, "size": {size}}}' in plan
