"""The ONNX front end against ONNX Runtime (one thread): every single-node case of ONNX's
own backend suite for the operators tvmdev maps (tests/onnx_cases.py), and two
multi-layer models built here (tests/onnx_build.py), on the host with and without a
device and (slow) on the boards. Bad models are in tests/test_onnx_errors.py.

Tolerance: |c - r| <= 1e-5 + 1e-4 * |r| (tvmdev.run.compare).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import Result, need_module, need_tool

from tvmdev.errors import TvmdevError
from tvmdev.load.export import description
from tvmdev.model import reference
from tvmdev.run.compare import ATOL, RTOL

need_module("onnx", "pip install -e '.[test]'")
need_module("onnxruntime", "pip install -e '.[test]'")
import onnx  # noqa: E402
import onnx_build  # noqa: E402
import onnx_cases  # noqa: E402
import onnx_variants  # noqa: E402
from onnx_shape_refusals import shape_refusal  # noqa: E402

from tvmdev.frontends import onnx as frontend  # noqa: E402


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, atol=ATOL, rtol=RTOL))


# --- ONNX's node tests --------------------------------------------------------------

def _refusal(model: Any) -> str | None:
    """The reason tvmdev must refuse a node case, worked out from the model alone: a
    pattern its one line must match; None for a float32 case it must import."""
    g = model.graph
    for vi in [*g.input, *g.output]:
        t = vi.type
        if vi in g.input and t.tensor_type.elem_type in (6, 7):  # int32, int64: indices
            if all(n.op_type == "Gather" and list(n.input).index(vi.name) == 1
                   for n in g.node if vi.name in n.input):
                continue
            return rf"input '{vi.name}' is int(32|64) and is [^;]*; tvmdev takes int32 and " \
                   "int64 inputs only as the indices of a Gather"
        if t.WhichOneof("value") != "tensor_type" or t.tensor_type.elem_type != 1:
            return rf"(input|output) '{vi.name}' is (?!float32)[a-z0-9 ]+; tvmdev imports " \
                   "float32 models for now"
        if any(d.dim_value == 0 and d.HasField("dim_value") for d in t.tensor_type.shape.dim):
            return rf"input '{vi.name}' is empty" if vi in g.input else r".* is empty \("
    return shape_refusal(model)


class NodeRun:
    """One node case imported: refused (with its line), or its model and ONNX Runtime's
    outputs."""

    def __init__(self, case: onnx_cases.NodeCase) -> None:
        self.case = case
        self.error: str | None = None
        self.imported: Any = None
        if case.inputs is None:  # sequences, optionals: refused before any data is read
            raw, self.feeds = case.model, {}
        else:
            raw, self.feeds = onnx_cases.frozen(case)
        self.raw = raw
        self.reason = _refusal(onnx.load_model_from_string(raw))
        try:
            self.imported = frontend.convert(Path(f"{case.name}.onnx"), raw, "m")
            self.model = self.imported.to_model()
        except TvmdevError as exc:
            self.error = exc.message
            return
        self.expected = onnx_cases.ort_run(raw, self.feeds)
        self.inputs = dict(zip(self.model.inputs, self.feeds.values(), strict=True))


@pytest.fixture(scope="module")
def node_runs() -> list[NodeRun]:
    return [NodeRun(c) for c in onnx_cases.node_cases()]


def test_node_suite_against_onnxruntime(node_runs: list[NodeRun]) -> None:
    """Every float32 case imports and its numpy reference matches ONNX Runtime; every
    other case is refused with its reason's line; none is wrong."""
    wrong, unexplained, refused = [], [], {}
    for run in node_runs:
        if run.error is not None:
            if run.reason is None or not re.match(run.reason, run.error):
                unexplained.append(f"{run.case.name}: {run.error}")
            key = re.sub(r"'[^']*'", "'...'", run.error.split(";")[0])
            refused[key] = refused.get(key, 0) + 1
            continue
        if run.reason is not None:
            unexplained.append(f"{run.case.name}: imported, but {run.reason}")
        got = reference.evaluate(run.model, run.inputs)
        for name, want in zip(run.model.outputs, run.expected, strict=True):
            if not _close(got[name], want):
                wrong.append(f"{run.case.name}: {name}")
    passed = len(node_runs) - sum(refused.values())
    print(f"\nONNX node tests: {passed} of {len(node_runs)} imported and match ONNX "
          f"Runtime, {sum(refused.values())} refused:")
    for key, n in sorted(refused.items()):
        print(f"  {n:3d} x {key}")
    assert not wrong and not unexplained, wrong + unexplained
    assert passed and len({r.case.kinds()[0] for r in node_runs if r.error is None}) == len(
        onnx_cases.SUPPORTED), "every supported operator has a case that imports"


@pytest.fixture(scope="module")
def variant_runs() -> list[NodeRun]:
    return [NodeRun(c) for c in onnx_variants.variant_cases()]


def test_variants_against_onnxruntime(variant_runs: list[NodeRun]) -> None:
    """Older opsets, folded operands, 1-D and 3-D windows (tests/onnx_variants.py): each
    imports and its numpy reference matches ONNX Runtime."""
    for run in variant_runs:
        assert run.error is None, f"{run.case.name}: {run.error}"
        got = reference.evaluate(run.model, run.inputs)
        for name, want in zip(run.model.outputs, run.expected, strict=True):
            assert _close(got[name], want), (run.case.name, name)


@pytest.mark.slow
def test_node_suite_is_load_model_tests() -> None:
    """The cached selection is what load_model_tests(kind="node") gives."""
    import warnings
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # the other operators' cases compute infinities
        names = onnx_cases.generated_names()
    assert sorted(c.name for c in onnx_cases.node_cases()) == sorted(names)


def _write(doc: dict[str, Any], arrays: dict[str, np.ndarray], folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / f"{doc['name']}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
    for fname, array in arrays.items():
        np.save(folder / fname, array)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("device", [False, True], ids=["host", "device"])
def test_node_suite_built_and_run(device: bool, node_runs: list[NodeRun],
                                  variant_runs: list[NodeRun], cli: Callable[..., Result],
                                  tmp_path: Path) -> None:
    """Every imported case (and variant) side by side in one model (one build), on the
    host; with device=True each case's operators on a device instance (--place
    KIND=npu0)."""
    need_tool("gcc", "apt install gcc")
    runs = [r for r in node_runs + variant_runs if r.error is None]
    parts = []
    for run in runs:
        im = frontend.convert(Path(f"{run.case.name}.onnx"), run.raw, "m")
        if device:
            im.place(["npu0:woofles"], [",".join(sorted(set(im.source_kinds))) + "=npu0"])
        m = im.to_model()
        parts.append((description(m), {f"{n}.npy": a for n, a in m.constants.items()}))
    doc, arrays = onnx_cases.merge(parts, "onnx_node_suite")
    path = _write(doc, arrays, tmp_path / "m")
    (tmp_path / "in").mkdir()
    for k, run in enumerate(runs):
        for name, x in run.inputs.items():
            np.save(tmp_path / "in" / f"c{k}_{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out[-3000:] + r.err
    assert r.out.rstrip().endswith("PASS")
    if device:  # every operator called on npu0, but the views the plan aliases (no call)
        plan = json.loads((tmp_path / "b/model/tvmgen_onnx_node_suite_plan.json").read_text())
        called = [o for o in plan["operators"]
                  if (o.get("alias") or {}).get("kind") != "view, no call"]
        assert f"operators {len(called)}: balanced" in r.out, r.out[-2000:]
    wrong = [f"{run.case.name}: {name}" for k, run in enumerate(runs)
             for name, want in zip(run.model.outputs, run.expected, strict=True)
             if not _close(np.load(tmp_path / "out" / f"c{k}_{name}.npy"), want)]
    print(f"\n{len(runs)} node cases built and run ({'device' if device else 'host'}): "
          f"{len(runs) - len(wrong)} match ONNX Runtime")
    assert not wrong, wrong


# --- multi-layer models -------------------------------------------------------------

MODELS = {"residual": onnx_build.residual, "mobilenet": onnx_build.mobilenet}


def _inputs(raw: bytes, seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = onnx.load_model_from_string(raw).graph
    return {vi.name: rng.uniform(-1, 1, [d.dim_value for d in vi.type.tensor_type.shape.dim]
                                 ).astype(np.float32) for vi in g.input}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_multilayer_import(name: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """Imported (batch norm folded into the conv and gemm weights, shape arithmetic,
    Identity and Dropout gone); the numpy reference of the YAML matches ONNX Runtime."""
    raw = MODELS[name]()
    onnx.checker.check_model(onnx.load_model_from_string(raw))
    src = tmp_path / f"{name}.onnx"
    src.write_bytes(raw)
    start = time.perf_counter()
    r = cli("import", str(src), "-o", str(tmp_path / "o"))
    took = time.perf_counter() - start
    assert r.code == 0, r.err
    print(f"\n{name}: imported in {took * 1000:.0f} ms")
    from tvmdev.load.model import load_model
    model = load_model(tmp_path / "o" / f"{name}.yaml")
    kinds = [op.op for op in model.operators]
    assert "mul" not in kinds  # every batch norm folded
    assert kinds.count("add") == (1 if name == "residual" else 0)  # the skip
    assert not any(k in kinds for k in ("batchnormalization", "identity", "dropout"))
    feeds = _inputs(raw)
    got = reference.evaluate(model, dict(zip(model.inputs, feeds.values(), strict=True)))
    want = onnx_cases.ort_run(raw, feeds)
    for out, w in zip(model.outputs, want, strict=True):
        assert _close(got[out], w), (out, np.abs(got[out] - w).max())


def _run(cli: Callable[..., Result], name: str, tmp_path: Path, *extra: str) -> float:
    """Run the model with tvmdev on seeded inputs; the largest difference from ONNX
    Runtime over its outputs."""
    raw = MODELS[name]()
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / f"{name}.onnx"
    src.write_bytes(raw)
    feeds = _inputs(raw)
    (tmp_path / "in").mkdir(exist_ok=True)
    for k, x in feeds.items():
        np.save(tmp_path / "in" / f"{k}.npy", x)
    out = tmp_path / f"out{len(extra)}"
    r = cli("run", str(src), "--inputs", str(tmp_path / "in"), "--save-outputs", str(out),
            "--build-dir", str(tmp_path / f"b{len(extra)}"), *extra)
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    want = onnx_cases.ort_run(raw, feeds)
    outputs = [vi.name for vi in onnx.load_model_from_string(raw).graph.output]
    diff = 0.0
    for o, w in zip(outputs, want, strict=True):
        got = np.load(out / f"{o}.npy")
        assert _close(got, w), (o, np.abs(got - w).max())
        diff = max(diff, float(np.abs(got - w).max()))
    return diff


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_multilayer_on_host(name: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """On the host, then with every conv on a device instance."""
    need_tool("gcc", "apt install gcc")
    diff = _run(cli, name, tmp_path)
    diff_dev = _run(cli, name, tmp_path, "--device", "npu0:woofles", "--place",
                    "conv2d=npu0")
    print(f"\n{name} host: max abs diff vs ONNX Runtime {diff:.3g}, conv2d on npu0 "
          f"{diff_dev:.3g}")


@pytest.mark.slow
@pytest.mark.parametrize("board,tool", [("mps2_an385", "qemu-system-arm"),
                                        ("mps3_an547", "qemu-system-arm"),
                                        ("linux_aarch64", "qemu-aarch64")])
def test_multilayer_on_boards(board: str, tool: str, cli: Callable[..., Result],
                              tmp_path: Path) -> None:
    need_tool(tool, "scripts/test.sh installs it")
    diffs = {name: _run(cli, name, tmp_path / name, "--board", board) for name in MODELS}
    print("".join(f"\n{name} on {board}: max abs diff vs ONNX Runtime {d:.3g}"
                  for name, d in diffs.items()))
