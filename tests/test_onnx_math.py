"""ONNX elementwise math, reductions, Gather at run time (int64 model inputs as its
indices), Clip with computed bounds, LayerNormalization and BatchNormalization's training mode
against ONNX Runtime: ONNX's
node cases as onnx ships them (bounds, indices and axes fed as graph inputs), a block as
PyTorch exports it, the refusals; (slow) the same through ``tvmdev run`` on the host.

Tolerance: |c - r| <= 1e-5 + 1e-4 * |r| (tvmdev.run.compare).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_module, need_tool

need_module("onnx", "pip install -e '.[test]'")
need_module("onnxruntime", "pip install -e '.[test]'")
import onnx  # noqa: E402
import onnx_build as B  # noqa: E402
import onnx_cases  # noqa: E402
from onnx import helper  # noqa: E402

from tvmdev.errors import TvmdevError  # noqa: E402
from tvmdev.frontends import onnx as frontend  # noqa: E402
from tvmdev.model import reference  # noqa: E402
from tvmdev.model.graph import Model  # noqa: E402
from tvmdev.run.compare import ATOL, RTOL  # noqa: E402

n = helper.make_node
INT64 = onnx.TensorProto.INT64


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, atol=ATOL, rtol=RTOL))


# --- ONNX's node cases, as shipped ------------------------------------------------------

# What each refused case of these operators must be refused for (as shipped, an operand
# a deployed model holds as an initializer is a graph input; other element types).
AS_SHIPPED_REFUSALS = (
    r"input '[^']+' is int64 and is operand 1 of Reduce(Max|Min|Sum|Prod) \(",
    r"input '[^']+' is (int|uint)(8|16|32|64) and is operand [01] of Pow \(",
    r"input '[^']+' is (int8|uint8|bool|float16|bfloat16|float64|int16|uint16|int32|uint32|"
    r"uint64|int64); tvmdev imports float32 models",
    r"input '[^']+' is (int8|uint8|int16|int32|int64) and is operand [01] of "
    r"(Clip|Abs|Neg|Pow|Sub|Div) \(",
    r"input '[^']+' is empty",
    r"output '[^']+' is (int|uint|bool)",
)


# The operators whose node cases run as shipped here.
SHIPPED = (*onnx_cases.MATH, "Clip", "Sub", "Div", "BatchNormalization")


@pytest.fixture(scope="module")
def shipped() -> list[tuple[str, Any, dict[str, np.ndarray]]]:
    """The node cases of the operators of onnx_math.py, Clip, Sub, Div and
    BatchNormalization, as onnx ships them."""
    out = []
    for case in onnx_cases.node_cases():
        if case.inputs is None or not set(case.kinds()) <= set(SHIPPED):
            continue
        model = case.proto()
        names = [vi.name for vi in model.graph.input]
        out.append((case.name, case.model, dict(zip(names, case.inputs, strict=True))))
    return out


def test_node_cases_as_shipped(shipped: list[tuple[str, Any, dict[str, np.ndarray]]]
                               ) -> None:
    """Each case imports and matches ONNX Runtime, or is refused for a reason above; each
    operator but ReduceSum has cases that import; Clip's bounds and Gather's indices are
    computed at run time (graph inputs)."""
    passed: dict[str, int] = {}
    wrong, unexplained = [], []
    for name, raw, feeds in shipped:
        try:
            m = frontend.convert(Path(f"{name}.onnx"), raw, "m").to_model()
        except TvmdevError as exc:
            if not any(re.match(r, exc.message) for r in AS_SHIPPED_REFUSALS):
                unexplained.append(f"{name}: {exc.message}")
            continue
        got = reference.evaluate(m, dict(zip(m.inputs, feeds.values(), strict=True)))
        want = onnx_cases.ort_run(raw, feeds)
        if not all(_close(got[o], w) for o, w in zip(m.outputs, want, strict=True)):
            wrong.append(name)
        kind = onnx.load_model_from_string(raw).graph.node[0].op_type
        passed[kind] = passed.get(kind, 0) + 1
    assert not wrong and not unexplained, wrong + unexplained
    # every ReduceSum case feeds its axes as a graph input (tests/onnx_cases.py freezes them)
    assert set(passed) == set(SHIPPED) - {"ReduceSum"}, passed
    bn = [r for r in shipped if r[0] == "test_batchnorm_epsilon"]
    m = frontend.convert(Path("b.onnx"), bn[0][1], "m").to_model()  # statistics computed
    assert len(m.inputs) == 5 and "div" in [op.op for op in m.operators]
    bn = [r for r in shipped if r[0] == "test_batchnorm_epsilon_training_mode"]
    m = frontend.convert(Path("t.onnx"), bn[0][1], "m").to_model()  # the batch's statistics
    assert len(m.outputs) == 3 and [op.op for op in m.operators].count("mean") == 2
    clip = [r for r in shipped if r[0] == "test_clip_splitbounds"]
    m = frontend.convert(Path("c.onnx"), clip[0][1], "m").to_model()
    assert [op.op for op in m.operators] == ["clip_bounds"] and len(m.inputs) == 3
    gather = [r for r in shipped if r[0] == "test_gather_negative_indices"]
    m = frontend.convert(Path("g.onnx"), gather[0][1], "m").to_model()
    assert [m.tensors[t].dtype for t in m.inputs] == ["float32", "int32"]


# --- a block as PyTorch exports it --------------------------------------------------------

def _block(opset: int = 20) -> bytes:
    """Token ids (int64) -> embedding Gather -> LayerNormalization -> Gelu -> Pow ->
    flattened per batch (shape arithmetic on the ids' shape) -> Clip between a ReduceMin
    computed at run time and a constant -> Neg, Exp, Log, Abs, Sqrt (of 1 more: well
    conditioned), Erf -> ReduceMax, ReduceSum, ReduceProd (axes an operand) and the
    LayerNormalization's Mean and InvStdDev as outputs."""
    rng = np.random.default_rng(7)
    inits = [B.init("table", rng.uniform(-1, 1, (10, 8)).astype(np.float32)),
             B.init("scale", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
             B.init("bias", rng.uniform(-0.1, 0.1, 8).astype(np.float32)),
             B.init("two", np.float32(2.0)), B.init("three", np.int64(3)),
             B.init("zero", np.array(0, np.int64)), B.init("minus1", np.array([-1], np.int64)),
             B.init("axis1", np.array([1], np.int64)), B.init("hi", np.float32(0.5)),
             B.init("one", np.float32(1.0))]
    nodes = [
        n("Gather", ["table", "ids"], ["emb"], name="embed"),
        n("LayerNormalization", ["emb", "scale", "bias"], ["ln", "mean", "inv"], axis=-1,
          epsilon=1e-3),
        n("Gelu", ["ln"], ["g"], approximate="tanh"),
        n("Pow", ["g", "two"], ["sq"]),
        n("Pow", ["sq", "three"], ["cube"]),
        n("Shape", ["ids"], ["s"]), n("Gather", ["s", "zero"], ["batch"]),
        n("Unsqueeze", ["batch", "zero"], ["b1"]),
        n("Concat", ["b1", "minus1"], ["flat_shape"], axis=0),
        n("Reshape", ["cube", "flat_shape"], ["flat"]),
        n("ReduceMin", ["flat"], ["lo"], keepdims=0),
        n("Clip", ["flat", "lo", "hi"], ["c"]),
        n("Neg", ["c"], ["neg"]), n("Exp", ["neg"], ["e"]), n("Log", ["e"], ["l"]),
        n("Abs", ["l"], ["a"]), n("Add", ["a", "one"], ["a1"]), n("Sqrt", ["a1"], ["r"]),
        n("Erf", ["r"], ["erf"]),
        n("ReduceMax", ["erf", "axis1"], ["max"], keepdims=1),
        n("ReduceSum", ["erf", "axis1"], ["sum"], keepdims=0),
        n("ReduceProd", ["e", "axis1"], ["prod"], keepdims=0),
    ]
    outs = [B.tensor("max", [2, 1]), B.tensor("sum", [2]), B.tensor("prod", [2]),
            B.tensor("mean", [2, 5, 1]), B.tensor("inv", [2, 5, 1])]
    return B.model(nodes, [B.tensor("ids", [2, 5], INT64)], outs, inits, opset=opset)


IDS = np.array([[0, 3, 9, -1, 4], [7, 7, 2, -10, 5]], np.int64)


def test_block_against_onnxruntime() -> None:
    """Imported: the ids an int32 input of the executor, the shape arithmetic folded; the
    numpy reference matches ONNX Runtime."""
    raw = _block()
    onnx.checker.check_model(onnx.load_model_from_string(raw), full_check=True)
    im = frontend.convert(Path("block.onnx"), raw, "block")
    m = im.to_model()
    assert m.tensors["ids"].dtype == "int32"
    assert any("input 'ids' is int64 in the model; the executor takes it as int32" in note
               for note in im.notes)
    kinds = {op.op for op in m.operators}
    assert kinds >= {"gather", "layer_norm", "gelu", "pow", "reduce_min", "clip_bounds",
                     "neg", "exp", "log", "abs", "sqrt", "erf", "reduce_max", "reduce_sum",
                     "reduce_prod", "mean", "inv_std_dev", "reshape"}, kinds
    got = reference.evaluate(m, {"ids": IDS})
    want = onnx_cases.ort_run(raw, {"ids": IDS})
    for o, w in zip(m.outputs, want, strict=True):
        assert _close(got[o], w), (o, got[o], w)


def test_reductions_before_axes_became_operands() -> None:
    """ReduceMax with axes an attribute (before opset 18), ReduceSum with axes an operand
    (opset 13 on) and noop_with_empty_axes, against ONNX Runtime."""
    nodes = [n("ReduceMax", ["x"], ["max"], axes=[0, 2], keepdims=0),
             n("ReduceSum", ["x", "axes"], ["sum"], keepdims=1),
             n("ReduceSum", ["x"], ["same"], noop_with_empty_axes=1),
             n("ReduceProd", ["x"], ["prod"], keepdims=0)]
    raw = B.model(nodes, [B.tensor("x", [2, 3, 4])],
                  [B.tensor("max", [3]), B.tensor("sum", [1, 3, 1]),
                   B.tensor("same", [2, 3, 4]), B.tensor("prod", [])],
                  [B.init("axes", np.array([0, -1], np.int64))], opset=13)
    m = frontend.convert(Path("r.onnx"), raw, "r").to_model()
    x = np.random.default_rng(3).uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    got = reference.evaluate(m, {"x": x})
    for o, w in zip(m.outputs, onnx_cases.ort_run(raw, {"x": x}), strict=True):
        assert _close(got[o], w), o


def test_int_input_read_only_by_shape() -> None:
    """An int64 input only Shape reads: its static shape folds; it stays an int32 input
    of the executor (the application passes it; no operator reads it)."""
    raw = B.model([n("Shape", ["mask"], ["s"]), n("Reshape", ["x", "s"], ["y"])],
                  [B.tensor("x", [2, 3]), B.tensor("mask", [3, 2], INT64)],
                  [B.tensor("y", [3, 2])])
    m = frontend.convert(Path("s.onnx"), raw, "s").to_model()
    assert [m.tensors[t].dtype for t in m.inputs] == ["float32", "int32"]
    assert [(op.op, op.attr_dict["shape"]) for op in m.operators] == [("reshape", (3, 2))]


# --- refusals ---------------------------------------------------------------------------

HINT_INITIALIZER = "a value the model needs at import (a shape, axes, pads) must be an " \
                   "initializer"
REFUSED: dict[str, tuple[Callable[[], bytes], str, str | None]] = {
    "int64_shape_input": (lambda: B.model(
        [n("Reshape", ["x", "shape"], ["y"], name="r")],
        [B.tensor("x", [2, 3]), B.tensor("shape", [2], INT64)], [B.tensor("y", [3, 2])]),
        "input 'shape' is int64 and is operand 1 of Reshape (node 0 'r'); tvmdev takes int32 "
        "and int64 inputs only as the indices of a Gather (or read only by Shape)",
        HINT_INITIALIZER),
    "int64_data_of_gather": (lambda: B.model(
        [n("Gather", ["ids", "i"], ["g"], name="g"), n("Cast", ["g"], ["y"], to=1)],
        [B.tensor("ids", [4], INT64)], [B.tensor("y", [2])],
        [B.init("i", np.array([0, 1], np.int64))]),
        "input 'ids' is int64 and is the data of Gather (node 0 'g'); tvmdev takes int32 and "
        "int64 inputs only as the indices of a Gather (or read only by Shape)",
        HINT_INITIALIZER),
    "gather_out_of_range": (lambda: B.model(
        [n("Gather", ["x", "i"], ["y"], name="g", axis=1)], [B.tensor("x", [2, 3])],
        [B.tensor("y", [2, 2])], [B.init("i", np.array([0, 3], np.int64))]),
        "1 unsupported operator: Gather (indices 0 to 3 out of range for a dim of 3) x1 "
        "(first: node 0 'g')", "tvmdev maps these ONNX operators"),
    "clip_bound_not_scalar": (lambda: B.model(
        [n("Clip", ["x", "lo"], ["y"], name="c")],
        [B.tensor("x", [2, 3]), B.tensor("lo", [3])], [B.tensor("y", [2, 3])]),
        "1 unsupported operator: Clip (min of shape [3] (a scalar is needed)) x1 (first: node "
        "0 'c')", "tvmdev maps these ONNX operators"),
    "layer_norm_stash_type": (lambda: B.model(
        [n("LayerNormalization", ["x", "s"], ["y"], name="ln", stash_type=0)],
        [B.tensor("x", [2, 3])], [B.tensor("y", [2, 3])],
        [B.init("s", np.ones(3, np.float32))], opset=17),
        "1 unsupported operator: LayerNormalization (stash_type 0) x1 (first: node 0 'ln')",
        "tvmdev maps these ONNX operators"),
    "batch_norm_training_opset_12": (lambda: B.model(
        [n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"],
           name="bn")],
        [B.tensor("x", [2, 3, 4])], [B.tensor("y", [2, 3, 4]), B.tensor("rm", [3]),
                                     B.tensor("rv", [3])],
        [B.init(k, np.ones(3, np.float32)) for k in "sbmv"], opset=12),
        "1 unsupported operator: BatchNormalization (training mode before opset 14 (opset "
        "12)) x1 (first: node 0 'bn')", "tvmdev maps these ONNX operators"),
}


@pytest.mark.parametrize("shape,outputs", [([5, 3], 3), ([2, 4, 7], 1), ([2, 3, 2, 5], 2)])
def test_batch_norm_training_against_onnxruntime(shape: list[int], outputs: int) -> None:
    """training_mode 1 at momentum 0.7, of a 2-D, 3-D and 4-D input, with Y alone, with
    running_mean, and both running statistics read (graph outputs)."""
    c = shape[1]
    outs = ["y", "rm", "rv"][:outputs]
    raw = B.model([n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                     momentum=0.7,
                     training_mode=1, epsilon=1e-3)],
                  [B.tensor("x", shape)],
                  [B.tensor(o, shape if o == "y" else [c]) for o in outs],
                  [B.init("s", np.linspace(0.5, 1.5, c, dtype=np.float32)),
                   B.init("b", np.linspace(-1, 1, c, dtype=np.float32)),
                   B.init("m", np.linspace(-0.2, 0.3, c, dtype=np.float32)),
                   B.init("v", np.linspace(0.5, 2, c, dtype=np.float32))], opset=15)
    x = np.random.default_rng(c).uniform(-3, 3, shape).astype(np.float32)
    m = frontend.convert(Path("bn.onnx"), raw, "m").to_model()
    got = reference.evaluate(m, {m.inputs[0]: x})
    want = onnx_cases.ort_run(raw, {"x": x})
    assert all(_close(got[o], w) for o, w in zip(m.outputs, want, strict=True))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    make, message, hint = REFUSED[case]
    path = tmp_path / "m.onnx"
    path.write_bytes(make())
    r = cli("import", str(path), "-o", str(tmp_path / "o"))
    assert r.code == 1, r.out
    lines = r.err.splitlines()
    assert lines[0] == f"tvmdev: {path}: {message}"
    assert len(lines) == (1 if hint is None else 2), lines
    if hint is not None:
        assert lines[1].startswith(f"  hint: {hint}"), lines
    assert not (tmp_path / "o").exists()


# --- through tvmdev run -------------------------------------------------------------------

def _params_against_structs(m: Model) -> None:
    """Each operator's params are exactly the fields of its C struct (pycparser)."""
    from test_params_structs import SCRATCH, struct_fields

    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    fields = struct_fields()
    compiled = compile_model(m, board_by_name("host"))
    for prep in compiled.ops:
        given = tuple(prep.params) + (SCRATCH if prep.takes_scratch else ())
        assert sorted(given) == sorted(fields[prep.struct]), prep.struct


@pytest.mark.slow
def test_block_built_and_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    """``tvmdev run block.onnx`` on the host with int64 ids from a file: the C kernels match
    the reference, and ONNX Runtime; an index out of range is one line."""
    raw = _block()
    src = tmp_path / "block.onnx"
    src.write_bytes(raw)
    _params_against_structs(frontend.convert(src, raw, "block").to_model())
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "ids.npy", IDS)
    r = cli("run", str(src), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    want = onnx_cases.ort_run(raw, {"ids": IDS})
    for vi, w in zip(onnx.load_model_from_string(raw).graph.output, want, strict=True):
        assert _close(np.load(tmp_path / "out" / f"{vi.name}.npy"), w), vi.name
    np.save(tmp_path / "in" / "ids.npy", np.where(IDS == 9, 10, IDS))
    r = cli("run", str(src), "--inputs", str(tmp_path / "in"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 1
    errors = [line for line in r.err.splitlines() if not line.startswith("note: ")]
    assert errors[0] == (f"tvmdev: {tmp_path / 'in' / 'ids.npy'}: input 'ids' holds -10 to "
                         "10; its values must be in [-10, 10)")


@pytest.mark.slow
def test_node_cases_as_shipped_built_and_run(
        shipped: list[tuple[str, Any, dict[str, np.ndarray]]], cli: Callable[..., Result],
        tmp_path: Path) -> None:
    """The cases that import, as shipped, side by side in one model run on the host: the C
    kernels (runtime Clip bounds and Gather indices included) match ONNX Runtime."""
    import yaml

    from tvmdev.load.export import description
    runs, parts = [], []
    for name, raw, feeds in shipped:
        try:
            m = frontend.convert(Path(f"{name}.onnx"), raw, "m").to_model()
        except TvmdevError:
            continue
        runs.append((m, feeds, onnx_cases.ort_run(raw, feeds)))
        parts.append((description(m), {f"{k}.npy": a for k, a in m.constants.items()}))
    doc, arrays = onnx_cases.merge(parts, "math_cases")
    (tmp_path / "m").mkdir()
    (tmp_path / "in").mkdir()
    (tmp_path / "m" / "math_cases.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    for fname, array in arrays.items():
        np.save(tmp_path / "m" / fname, array)
    for k, (m, feeds, _) in enumerate(runs):
        for t, x in zip(m.inputs, feeds.values(), strict=True):
            np.save(tmp_path / "in" / f"c{k}_{t}.npy", x)
    r = cli("run", str(tmp_path / "m" / "math_cases.yaml"), "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out[-3000:] + r.err
    wrong = [(k, o) for k, (m, _, want) in enumerate(runs)
             for o, w in zip(m.outputs, want, strict=True)
             if not _close(np.load(tmp_path / "out" / f"c{k}_{o}.npy"), w)]
    assert len(runs) >= 50 and not wrong, wrong


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an385", "mps3_an547"])
def test_block_on_a_board(board: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """The block on Cortex-M3 (soft float) and Cortex-M55 in QEMU, seeded ids in the
    Gather's range compiled into the firmware as int32: the outputs match the reference."""
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    src = tmp_path / "block.onnx"
    src.write_bytes(_block())
    r = cli("run", str(src), "--board", board, "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out[-3000:] + r.err
    assert r.out.rstrip().endswith("PASS")


def test_cast_of_float_to_float_is_a_view() -> None:
    """A Cast of a computed float32 tensor to float32, as GroupNormalization's function
    body casts to its input's type, is a reshape (a view): the expanded GroupNormalization
    cases, as onnx ships them, import and match ONNX Runtime."""
    import importlib

    import onnx.backend.test.case.node as node_cases
    importlib.import_module("onnx.backend.test.case.node.groupnormalization")
    cases = {c.name: c for c in node_cases._NodeTestCases
             if c.name.startswith("test_group_normalization") and c.name.endswith("_expanded")}
    assert len(cases) == 2, sorted(cases)
    for name, case in cases.items():
        raw = case.model.SerializeToString()
        feeds = {vi.name: np.asarray(v) for vi, v in zip(case.model.graph.input,
                                                         case.data_sets[0][0], strict=True)}
        assert "Cast" in {node.op_type for node in case.model.graph.node}
        m = frontend.convert(Path(f"{name}.onnx"), raw, "m").to_model()
        got = reference.evaluate(m, dict(zip(m.inputs, feeds.values(), strict=True)))
        want = onnx_cases.ort_run(raw, feeds)
        assert all(_close(got[o], w) for o, w in zip(m.outputs, want, strict=True)), name
