"""Patch-based inference (tvmdev/plan/patch.py, patch_search.py): a stage run band by
band of rows computes what the whole stage computes, bit for bit.

The rewrite is checked without C first: the patched model's operators run one by one on
tvmdev's numpy reference, each row slice a view of its parent's bytes as the executor
points it, and the outputs must equal the unpatched model's and TFLM's interpreter's
(int8). Every stage and patch count the model allows is tried, so every band boundary
meets windows of 3x3, 5x5 and 7x7, strides 1 and 2, the residual ADD and both pools. A
band's padding shifted by one row makes the check fail. Then the generated C: the
portable kernels on the host and tvmdev_cm/CMSIS-NN on the Cortex-M4 under QEMU, patched
by the planner's own choice, against TFLM's interpreter.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import patch_cases as pc
import pytest
import tflm_ref
from conftest import Result, need_tool

from tvmdev.model.graph import Model


def _model(tmp_path: Path, dtype: str) -> tuple[Path, Model]:
    from tvmdev.frontends.importer import import_file
    path = tmp_path / f"cnn_{dtype}.tflite"
    path.write_bytes(pc.model(dtype))
    return path, import_file(path).to_model()


def _sliced(model: Model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``model`` run operator by operator on the numpy reference, a row slice reading and
    writing its parent's elements from its offset (as the executor's pointer does)."""
    from tvmdev.model.reference import evaluate
    values = dict(inputs)
    flat: dict[str, np.ndarray] = {}  # the parents of slices, by name, as flat arrays

    def parent(name: str) -> np.ndarray:
        if name not in flat:
            t = model.tensors[name]
            flat[name] = (values[name].ravel().copy() if name in values else
                          np.full(int(np.prod(t.shape)), 99, values[model.inputs[0]].dtype))
        return flat[name]

    def read(name: str) -> np.ndarray:
        if name in model.slices:
            p, off = model.slices[name]
            shape = model.tensors[name].shape
            return parent(p)[off:off + int(np.prod(shape))].reshape(shape)
        if name in flat:  # written by rows
            return flat[name].reshape(model.tensors[name].shape)
        return values[name]

    for op in model.operators:
        args = [t for t in op.inputs if t is not None and model.tensors[t].role != "constant"]
        one = replace(model, operators=(replace(op, index=0),), inputs=tuple(args),
                      outputs=op.outputs)
        got = evaluate(one, {t: read(t) for t in args})[op.outputs[0]]
        out = op.outputs[0]
        if out in model.slices:
            p, off = model.slices[out]
            parent(p)[off:off + got.size] = got.ravel()
        else:
            values[out] = got
    return {n: flat[n].reshape(model.tensors[n].shape) if n in flat else values[n]
            for n in model.outputs}


def _stages(model: Model) -> list[tuple[int, int, int]]:
    """Every (first, last) stage the model allows, in 3 patches, and those from the first
    operator also in a patch per row."""
    from tvmdev.plan.patch import Geometry, stage_problem
    geo = Geometry(model)
    n = len(model.operators)
    out = []
    for a in range(n):
        for b in range(a, n):
            height = model.tensors[model.operators[b].outputs[0]].shape[1]
            # 3 bands everywhere; a band per row from the start (every row a boundary)
            counts = {3, height} if a == 0 else {3}
            if stage_problem(geo, a, b) is None:
                out += [(a, b, p) for p in sorted(counts) if p <= height]
    return out


@pytest.mark.parametrize("dtype", ["int8", pytest.param("float32", marks=pytest.mark.slow)])
def test_every_stage_computes_the_unpatched_outputs(dtype: str, tmp_path: Path) -> None:
    """Each stage and patch count: the patched model's outputs are the unpatched model's
    bytes and TFLM's interpreter's for int8; float32 ones within numpy's rounding of a
    differently blocked sum (the C kernels' bytes are checked equal on the host)."""
    from tvmdev.model.reference import evaluate
    from tvmdev.plan.padfold import fold_pads
    from tvmdev.plan.patch import Stage, patch_model
    path, m = _model(tmp_path, dtype)
    m, _ = fold_pads(m)
    xs = {m.inputs[0]: pc.inputs(dtype)[0]}
    want = evaluate(m, xs)[m.outputs[0]]
    if dtype == "int8":
        assert np.array_equal(want, tflm_ref.outputs(path.read_bytes(), pc.inputs(dtype), 1)[0])
    stages = _stages(m)
    assert len(stages) > 25 and max(b - a for a, b, _ in stages) == len(m.operators) - 1
    for a, b, p in stages:
        patched, where = patch_model(m, (Stage(a, b, p),))
        assert len(patched.operators) == len(m.operators) + (b - a + 1) * (p - 1)
        assert sorted(set(where)) == list(range(len(m.operators)))
        got = _sliced(patched, xs)[m.outputs[0]]
        if dtype == "int8":
            assert got.tobytes() == np.asarray(want, got.dtype).tobytes(), (a, b, p)
        else:  # numpy sums a smaller block in another order: the C kernels don't (below)
            assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (a, b, p)


def test_a_band_padded_one_row_off_is_caught(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: bands whose windows sit one row off (one more row of
    padding at one end, one fewer at the other) compute other values."""
    from tvmdev.model.reference import evaluate
    from tvmdev.plan import patch
    from tvmdev.plan.padfold import fold_pads
    _, m = _model(tmp_path, "int8")
    m, _ = fold_pads(m)
    xs = {m.inputs[0]: pc.inputs("int8")[0]}
    want = evaluate(m, xs)[m.outputs[0]]
    good = patch._pads

    def shifted(geo: patch.Geometry, op: object, out_rows: patch.Rows,
                in_rows: patch.Rows) -> tuple[int, ...]:
        top, left, bottom, right = good(geo, op, out_rows, in_rows)  # type: ignore[arg-type]
        if bottom > 0:  # the band's windows one row lower, the output the same size
            return top + 1, left, bottom - 1, right
        return (top - 1, left, bottom + 1, right) if top > 0 else (top, left, bottom, right)

    monkeypatch.setattr(patch, "_pads", shifted)
    patched, _ = patch.patch_model(m, (patch.Stage(0, 5, 3),))
    assert not np.array_equal(_sliced(patched, xs)[m.outputs[0]], want)


def test_the_search_lowers_the_arena_within_the_budget(tmp_path: Path) -> None:
    """On a bare-metal board the planner patches by default where the arena shrinks, the
    stage's extra work within the budget; --patch off and a budget of 1.0 patch nothing."""
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.patch import Geometry, Stage
    from tvmdev.plan.patch_search import CALL_COST, op_cost, stage_cost
    from tvmdev.plan.pipeline import Options, compile_model
    _, m = _model(tmp_path, "int8")
    board = board_by_name("mps2_an386")
    off = compile_model(m, board, Options(patch="off"))
    auto = compile_model(m, board, Options(patch_budget=1.25))
    assert not off.patches and auto.patches
    assert auto.memory.arena_size < off.memory.arena_size
    base = off.model
    geo = Geometry(base)
    total = sum(op_cost(geo, op) + CALL_COST for op in base.operators)
    names = [op.name for op in base.operators]
    extra = 0
    for s in auto.patches:
        first, last = names.index(s.first), names.index(s.last)
        plain = sum(op_cost(geo, op) + CALL_COST for op in base.operators[first:last + 1])
        extra += stage_cost(geo, Stage(first, last, s.patches)) - plain
    assert 0 < extra <= 0.25 * total
    assert not compile_model(m, board, Options(patch_budget=1.0)).patches


def test_aot_names_the_stage_and_a_bad_budget_is_one_line(cli: Callable[..., Result],
                                                          tmp_path: Path) -> None:
    path, _ = _model(tmp_path, "int8")
    r = cli("aot", str(path), "--board", "mps2_an386", "--patch-budget", "1.3", "-o",
            str(tmp_path / "out"))
    assert r.code == 0, r.err
    line = next(ln for ln in r.out.splitlines() if ln.startswith("patch-based: "))
    plan = json.loads(next((tmp_path / "out").glob("*_plan.json")).read_text())
    stage = plan["patches"][0]
    assert f"{stage['first']} .. {stage['last']}" in line and stage["patches"] >= 2
    assert any("slice_of" in t for t in plan["tensors"].values())
    assert "--patch-budget 1.3" in (tmp_path / "out/tvmgen_cnn_int8.c").read_text()
    bad = cli("aot", str(path), "--patch-budget", "0.9", "-o", str(tmp_path / "bad"))
    assert bad.code == 1 and bad.err.startswith("tvmdev: --patch-budget 0.9: ")
    assert len(bad.err.strip().splitlines()) == 2 and not (tmp_path / "bad").exists()


def _run(cli: Callable[..., Result], path: Path, m: Model, tmp_path: Path,
         *options: str, dtype: str = "int8") -> tuple[np.ndarray, Result]:
    xs = pc.inputs(dtype)
    (tmp_path / "in").mkdir(parents=True)
    np.save(tmp_path / "in" / f"{m.inputs[0]}.npy", xs[0])
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return np.load(tmp_path / "out" / f"{m.outputs[0]}.npy"), r


@pytest.mark.slow
def test_patched_on_the_host_is_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The portable kernels, patched (--patch auto on the host): int8 gives TFLM's bytes,
    float32 the unpatched build's bytes."""
    need_tool("gcc", "apt install gcc")
    path, m = _model(tmp_path, "int8")
    got, r = _run(cli, path, m, tmp_path, "--patch", "auto", "--patch-budget", "1.3")
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert plan["patches"], r.out
    want = tflm_ref.outputs(path.read_bytes(), pc.inputs("int8"), 1)[0]
    assert got.dtype == want.dtype and np.array_equal(got, want)
    path, m = _model(tmp_path, "float32")
    runs = [_run(cli, path, m, tmp_path / p, "--patch", p, "--patch-budget", "1.3",
                 dtype="float32") for p in ("auto", "off")]
    assert "patch-based" not in runs[1][1].out
    assert runs[0][0].tobytes() == runs[1][0].tobytes()


@pytest.mark.slow
def test_patched_on_the_cortex_m4_is_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    """mps2_an386 patches by default; tvmdev_cm's and CMSIS-NN's kernels (when its tree
    is there), or the portable ones, on the bands give TFLM's bytes under QEMU."""
    import os
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    path, m = _model(tmp_path, "int8")
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    got, r = _run(cli, path, m, tmp_path, "--board", "mps2_an386", "--patch-budget", "1.3",
                  *(("--cmsis-nn", tree) if tree else ()))
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert plan["patches"], r.out
    want = tflm_ref.outputs(path.read_bytes(), pc.inputs("int8"), 1)[0]
    assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("io", ["workspace", "caller"])
def test_stages_from_the_input_to_the_output_in_c(io: str, tmp_path: Path) -> None:
    """Stages the search may not pick, forced: from the graph input (read by rows) and to
    the graph output (written by rows), with the I/O in the workspace and the caller's,
    a band per row; the C on the host gives TFLM's bytes."""
    need_tool("gcc", "apt install gcc")
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.patch import Stage
    from tvmdev.plan.pipeline import Options, compile_model
    from tvmdev.run.job import execute, stage
    path, m = _model(tmp_path, "int8")
    xs = pc.inputs("int8")
    want = tflm_ref.outputs(path.read_bytes(), xs, 1)[0]
    last = len(m.operators) - 1
    for stages in ((Stage(0, 3, 12),), (Stage(0, 0, 5), Stage(4, last, 3))):
        compiled = compile_model(m, board_by_name("host"), Options(  # unfused: every op rowwise
            io=io, patch_stages=stages, stand_in_kernels=True, fuse=False))
        job = stage(compiled, tmp_path / f"{io}{len(stages)}", {m.inputs[0]: xs[0]})
        job.backend.build(job)
        result = execute(job)
        assert result.status == 0 and not result.mismatches(), result.stdout
        got = result.outputs[m.outputs[0]]
        assert got.dtype == want.dtype and np.array_equal(got, want)
