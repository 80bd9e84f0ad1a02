"""The TFLite operators the field's models need (tests/tflite_field_cases.py), int8 and
float32, against TFLM's interpreter: each operator's seeded one-op cases merged into one
.tflite per dtype, imported and evaluated by tvmdev's numpy reference (fast), and built
and run with ``tvmdev run`` on the host (slow); int8 bit for bit, float32 within
``tvmdev run``'s tolerance. Then the models of the field these operators let in: TFLM's
person_detect, MIT TinyEngine's MCUNet models and the PyTorch-exported MobileNetV2 in
TFLM's tree, bit-exact with TFLM on the host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflite_field_cases as fc
import tflm_ref
from conftest import Result, need_module, need_tool
from s8_cases import merged

from tvmdev.run.compare import ATOL, RTOL

need_module("tflite", "pip install -e '.[tflite]'")


def _same(got: np.ndarray, want: np.ndarray, dtype: str) -> bool:
    if got.shape != want.shape:
        return False
    if dtype == "int8":
        return got.dtype == want.dtype and np.array_equal(got, want)
    return bool(np.allclose(got, want, atol=ATOL, rtol=RTOL))


def _wrong(names: list[str], got: dict[str, np.ndarray], want: list[np.ndarray],
           labels: list[str], dtype: str) -> list[str]:
    return [f"{label}: {np.count_nonzero(np.asarray(got[n]) != w)} of {w.size} differ"
            for n, w, label in zip(names, want, labels, strict=True)
            if not _same(np.asarray(got[n]), w, dtype)]


@pytest.mark.parametrize("op,dtype", fc.KEYS)
def test_reference_matches_tflm(op: str, dtype: str, tmp_path: Path) -> None:
    """Every case merged into one model, imported (the converter, the op table, the
    loader's checks) and evaluated by tvmdev's numpy reference: each output is TFLM's."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    cases = fc.cases(op, dtype)
    data, arrays = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    assert {m.tensors[o].dtype for o in m.outputs} == {dtype}
    got = evaluate(m, dict(zip(m.inputs, arrays, strict=True)))
    want = tflm_ref.outputs(data, arrays, len(cases))
    assert _wrong(m.outputs, got, want, [c.label for c in cases], dtype) == []


@pytest.mark.slow
@pytest.mark.parametrize("op,dtype", fc.KEYS)
def test_run_matches_tflm(op: str, dtype: str, cli: Callable[..., Result],
                          tmp_path: Path) -> None:
    """The same merged model through ``tvmdev run`` on the host (its C kernels, which
    must PASS against the reference), every output saved and held against TFLM's."""
    need_tool("gcc", "apt install gcc")
    from tvmdev.frontends.importer import import_file
    cases = fc.cases(op, dtype)
    data, arrays = merged(cases)
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    m = import_file(path).to_model()
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    got = {n: np.load(tmp_path / "out" / f"{n}.npy") for n in m.outputs}
    want = tflm_ref.outputs(data, arrays, len(cases))
    assert _wrong(m.outputs, got, want, [c.label for c in cases], dtype) == []


def test_transpose_moving_no_data_is_a_view(tmp_path: Path) -> None:
    """A permutation that reorders only dims of size 1 becomes a reshape (no copy); the
    others a transpose."""
    from tvmdev.frontends.importer import import_file
    cases = fc.cases("transpose", "int8")
    data, _ = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    ops = [o.op for o in m.operators]
    views = [c.label for c, o in zip(cases, ops, strict=True) if o == "reshape"]
    assert views == ["transpose [5] [0]", "transpose [1, 1, 5, 3] [1, 0, 2, 3]",
                     "transpose [1, 4, 1, 3] [0, 2, 1, 3]", "transpose [3, 1, 1] [1, 0, 2]",
                     "transpose [1, 7, 1, 1, 2] [2, 1, 3, 4, 0]"]
    assert ops.count("transpose") == len(cases) - len(views)
