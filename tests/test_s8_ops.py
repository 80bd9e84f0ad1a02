"""The int8 operators of tvmdev/model/s8 (ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX,
LOGISTIC, TANH, PAD, PADV2, MEAN, CONCATENATION): params derived as TFLM's Prepare
derives them and the numpy reference, against TFLM's interpreter on one-op models,
bit for bit (tests/s8_op_cases.py builds the seeded cases). The C kernels are held
against TFLM on the same cases in tests/test_s8_kernels.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import s8_op_cases as oc
from conftest import Result, need_module
from s8_cases import Case

from tvmdev.model.s8 import concat, elementwise, softmax

CASES = {
    "add": lambda: oc.binary_cases("add"),
    "mul": lambda: oc.binary_cases("mul"),
    "avgpool2d": lambda: oc.pool_cases("avgpool2d"),
    "maxpool2d": lambda: oc.pool_cases("maxpool2d"),
    "softmax": oc.softmax_cases,
    "sigmoid": lambda: oc.activation_cases("sigmoid"),
    "tanh": lambda: oc.activation_cases("tanh"),
    "pad": oc.pad_cases,
    "mean": oc.mean_cases,
    "concat": oc.concat_cases,
}


def check_all(cases: list[Case]) -> None:
    """Every case's numpy reference equals TFLM's output exactly."""
    bad = []
    for case in cases:
        want = case.tflm()
        assert case.ref is not None
        assert case.ref.shape == want.shape, case.label
        if not np.array_equal(case.ref, want):
            diff = np.abs(case.ref.astype(int) - want.astype(int))
            bad.append(f"{case.label}: {int((diff > 0).sum())} differ, max {diff.max()}")
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("op", list(CASES))
def test_reference_matches_tflm(op: str) -> None:
    """tvmdev's numpy reference is bit-exact with TFLM on every case."""
    cases = CASES[op]()
    assert len(cases) >= 20
    check_all(cases)


def test_cases_are_not_trivial() -> None:
    """The cases exercise what they claim: outputs that vary, clamps that bite."""
    for op in ("add", "mul", "softmax", "sigmoid", "tanh", "mean", "avgpool2d"):
        outs = np.concatenate([c.ref.ravel() for c in CASES[op]() if c.ref is not None])
        assert len(np.unique(outs)) > 100, op
    relu = [c for c in oc.binary_cases("add") if " RELU " in c.label]
    assert any(c.ref is not None and c.params["act_min"] > -128
               and (c.ref == c.params["act_min"]).any() for c in relu)


def test_activation_range_by_hand() -> None:
    """RELU6 on scale 0.05, zero point -10: [-10, -10 + 120]; RELU_N1_TO_1: [-30, 10];
    a range wider than int8 is cut to it."""
    q = oc.fixed_quant(0.05, -10)
    assert elementwise.act_range("RELU6", q) == (-10, 110)
    assert elementwise.act_range("RELU_N1_TO_1", q) == (-30, 10)
    assert elementwise.act_range("RELU", oc.fixed_quant(0.01, 100)) == (100, 127)
    assert elementwise.act_range("NONE", q) == (-128, 127)


def test_softmax_refuses_other_output_quant() -> None:
    with pytest.raises(ValueError, match="1/256"):
        softmax.params((1, 4), 1.0, oc.fixed_quant(0.1, 0), oc.fixed_quant(1 / 128, -128))


def test_concat_mismatch_refused_like_tflm() -> None:
    """TFLM refuses a concatenation with an input quantized unlike the output; so does
    tvmdev's params."""
    case, quants = oc.concat_mismatch()
    with pytest.raises(Exception):  # noqa: B017 - TFLM raises its own runtime error
        case.tflm()
    with pytest.raises(ValueError, match="TFLM requires the same"):
        concat.params([(1, 3), (1, 2)], (1, 5), 1, quants[:2], quants[2])


@pytest.mark.parametrize("index", range(len(oc.refused_cases())))
def test_refused_like_tflm(index: int) -> None:
    """What TFLM refuses at allocation, tvmdev's params refuse, saying why."""
    case, why = oc.refused_cases()[index]
    with pytest.raises(RuntimeError):
        case.tflm()
    with pytest.raises(ValueError, match=why):
        oc.refused_params(case)


@pytest.mark.parametrize("index", range(len(oc.refused_cases())))
def test_refused_models_are_one_line(index: int, cli: Callable[..., Result],
                                     tmp_path: Path) -> None:
    """The same one-op models through ``tvmdev aot``: one line naming the operator (or the
    TFLite operator the importer cannot map), exit 1, nothing written."""
    need_module("tflite", "pip install -e '.[tflite]'")
    case, why = oc.refused_cases()[index]
    model = tmp_path / "m.tflite"
    model.write_bytes(case.model())
    r = cli("aot", str(model), "-o", str(tmp_path / "out"))
    assert r.code == 1 and "Traceback" not in r.err, r.err
    first = r.err.splitlines()[0]
    assert first.startswith(f"tvmdev: {model}: ") and why in first, r.err
    assert "operator 't1' (" in first or "unsupported operator: PADV2" in first, first
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("op", sorted(CASES))
def test_imported_models_compute_the_cases(op: str, tmp_path: Path) -> None:
    """Every case of ``op`` merged into one .tflite, imported (the TFLite converter, the
    op table's int8 form, the loader's checks) and evaluated by tvmdev's model reference:
    each output equals the case's reference (which test_reference_matches_tflm holds
    against TFLM). Cheap: no C is built (tests/test_tflite_int8_ops.py runs them)."""
    need_module("tflite", "pip install -e '.[tflite]'")
    from s8_cases import merged

    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    cases = CASES[op]()
    data, arrays = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    imported = import_file(tmp_path / "m.tflite")
    m = imported.to_model()
    assert {o.op for o in m.operators} == {op}
    assert all(m.op_dtype(o) == "int8" for o in m.operators)
    values = evaluate(m, dict(zip(m.inputs, arrays, strict=True)))
    for name, case in zip(m.outputs, cases, strict=True):
        assert case.ref is not None
        assert np.array_equal(values[name], case.ref), case.label
