"""TFLite's 16x8 quantization (int16 activations), against TFLM's interpreter: each
operator's seeded one-op cases (tests/tflite_int16_cases.py) merged into one .tflite,
imported and evaluated by the numpy reference (fast) and built and run with ``tvmdev
run`` on the host (slow), bit for bit; TFLM's SEANet integration-test models likewise,
and against the golden outputs stored beside them; and what TFLM refuses, refused in
one line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflite_int16_cases as ic
import tflm_ref
from conftest import Result, need_module, need_tool

need_module("tflite", "pip install -e '.[tflite]'")

ARENA = 1 << 22
SEANET = ("add", "conv", "leaky_relu", "pad", "quantize", "sub")


def _differ(names: list[str], got: dict[str, np.ndarray], want: list[np.ndarray],
            labels: list[str]) -> list[str]:
    return [f"{label}: {np.count_nonzero(np.asarray(got[n]) != w)} of {w.size} differ"
            for n, w, label in zip(names, want, labels, strict=True)
            if got[n].dtype != w.dtype or not np.array_equal(got[n], w)]


@pytest.mark.parametrize("op", list(ic.CASES))
def test_reference_matches_tflm(op: str, tmp_path: Path) -> None:
    """Every case of ``op`` imported and evaluated by the numpy reference: TFLM's output,
    bit for bit, and outputs spread over much of int16 (not trivially equal)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    model = import_file(tmp_path / "m.tflite").to_model()
    got = evaluate(model, dict(zip(model.inputs, m.arrays, strict=True)))
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(list(model.outputs), got, want, m.labels) == []
    assert len(np.unique(np.concatenate([w.ravel() for w in want]))) > 200


def _run(cli: Callable[..., Result], path: Path, arrays: list[np.ndarray], tmp_path: Path
         ) -> tuple[list[str], dict[str, np.ndarray]]:
    need_tool("gcc", "apt install gcc")
    from tvmdev.frontends.importer import import_file
    model = import_file(path).to_model()
    (tmp_path / "in").mkdir(parents=True)
    for name, x in zip(model.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return list(model.outputs), {n: np.load(tmp_path / "out" / f"{n}.npy")
                                 for n in model.outputs}


@pytest.mark.slow
@pytest.mark.parametrize("op", list(ic.CASES))
def test_run_matches_tflm(op: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """The same merged model through ``tvmdev run`` on the host (the portable C kernels),
    each output saved and held against TFLM's."""
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    names, got = _run(cli, tmp_path / "m.tflite", m.arrays, tmp_path)
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(names, got, want, m.labels) == []


# --- TFLM's SEANet integration tests -----------------------------------------------------

def seanet(folder: str) -> list[Path]:
    """The .tflite models of one SEANet folder of TFLM's tree (skip without the tree)."""
    root = os.environ.get("TFLM_SOURCE_DIR")
    if not root:
        pytest.skip("TFLM_SOURCE_DIR is not set (source the trees' env.sh): TFLM's tree "
                    "(github.com/tensorflow/tflite-micro) holds the SEANet models")
    models = sorted((Path(root) / "tensorflow/lite/micro/integration_tests/seanet"
                     / folder).glob("*.tflite"))
    if not models:
        pytest.skip(f"no SEANet {folder} models in {root}")
    return models


def _csv(path: Path, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    values = np.array([int(v) for v in path.read_text().replace("\n", ",").split(",")
                       if v.strip()])
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("folder", SEANET)
def test_seanet_reference_matches_tflm(folder: str) -> None:
    """Every model of the folder imports, and the numpy reference computes TFLM's output
    for seeded inputs over the whole int16 range and for the inputs stored beside it; and
    the golden output stored there wherever TFLM's interpreter computes it too (the
    goldens of 4 LEAKY_RELU models differ from TFLM's interpreter by one step: they follow
    the float32 multipliers of the tree's leaky_relu_common.cc, the interpreter derives
    them in double)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate, random_inputs
    wrong = []
    for path in seanet(folder):
        m = import_file(path).to_model()
        out = m.tensors[m.outputs[0]]
        stored = [path.with_name(f"{path.stem}_input{i}_{m.tensors[n].dtype}.csv")
                  for i, n in enumerate(m.inputs)]
        golden = path.with_name(f"{path.stem}_golden_{out.dtype}.csv")
        feeds = [random_inputs(m, 7), {n: _csv(s, m.tensors[n].dtype, m.tensors[n].shape)
                                       for n, s in zip(m.inputs, stored, strict=True)}]
        for k, ins in enumerate(feeds):
            want = tflm_ref.outputs(path.read_bytes(), [ins[n] for n in m.inputs], 1,
                                    ARENA)[0]
            got = evaluate(m, ins)[m.outputs[0]]
            if got.dtype != want.dtype or not np.array_equal(got, want):
                wrong.append(f"{path.name}: {np.count_nonzero(got != want)} differ from TFLM")
            gold = _csv(golden, out.dtype, out.shape) if k == 1 else want
            if np.array_equal(want, gold) and not np.array_equal(got, gold):
                wrong.append(f"{path.name}: differs from its golden output")
    assert wrong == []


@pytest.mark.slow
@pytest.mark.parametrize("folder", SEANET)
def test_seanet_runs_on_host(folder: str, cli: Callable[..., Result], tmp_path: Path
                             ) -> None:
    """The folder's first and last models through ``tvmdev run`` on the host: bit-exact
    with TFLM."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import random_inputs
    models = seanet(folder)
    for k, path in enumerate(dict.fromkeys([models[0], models[-1]])):
        m = import_file(path).to_model()
        ins = random_inputs(m, 3)
        arrays = [ins[n] for n in m.inputs]
        names, got = _run(cli, path, arrays, tmp_path / str(k))
        want = tflm_ref.outputs(path.read_bytes(), arrays, 1, ARENA)[0]
        assert got[names[0]].dtype == want.dtype and np.array_equal(got[names[0]], want)


@pytest.mark.parametrize("op", list(ic.CASES))
def test_params_are_the_structs_fields(op: str, tmp_path: Path) -> None:
    """The params generation computes for each int16 operator are exactly the fields of
    the C struct its kernels take (read with pycparser), but for the scratch fields the
    renderer fills."""
    from test_params_structs import struct_fields

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    (tmp_path / "m.tflite").write_bytes(ic.model(op).build())
    compiled = compile_model(import_file(tmp_path / "m.tflite").to_model(),
                             board_by_name("host"))
    fields = struct_fields()
    for prep in compiled.ops:
        want = set(fields[prep.struct]) - ({"scratch", "scratch_bytes"}
                                           if prep.takes_scratch else set())
        assert sorted(prep.params) == sorted(want), prep.struct
