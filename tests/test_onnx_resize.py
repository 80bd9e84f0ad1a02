"""ONNX Resize with its scales computed at run time (a graph input, as ONNX's node cases
feed them), against ONNX Runtime: the output's shape is the static one the model declares,
the kernel reads the scales each run, and scales giving another shape fail the run (the
numpy reference says so in one line; the C kernel returns an error). Slow: built and run
with ``tvmdev run`` on the host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_module, need_tool

need_module("onnx", "pip install -e '.[test]'")
need_module("onnxruntime", "pip install -e '.[test]'")
from onnx import helper  # noqa: E402
from onnx_build import model, tensor  # noqa: E402
from onnx_cases import ort_run  # noqa: E402

from tvmdev.errors import TvmdevError  # noqa: E402
from tvmdev.run.compare import ATOL, RTOL  # noqa: E402


def _run_time(x: list[int], out: list[int | str], scales: list[float],
              axes: list[int] | None = None, **attrs: Any) -> tuple[bytes, dict[str, Any]]:
    """A Resize whose scales are a graph input; its output declared ``out``."""
    if axes is not None:
        attrs["axes"] = axes
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attrs)
    raw = model([node], [tensor("X", x), tensor("scales", [len(scales)])],
                [tensor("Y", out)], opset=19)
    r = np.random.default_rng(sum(x))
    return raw, {"X": r.uniform(-3, 3, x).astype(np.float32),
                 "scales": np.array(scales, np.float32)}


CASES: dict[str, Callable[[], tuple[bytes, dict[str, Any]]]] = {
    "nearest": lambda: _run_time([1, 2, 4, 6], [1, 2, 8, 3], [1, 1, 2, 0.5]),
    "linear": lambda: _run_time([2, 3, 5, 4], [2, 3, 3, 9], [1, 1, 0.7, 2.4], mode="linear"),
    "cubic_align": lambda: _run_time([1, 1, 6, 6], [1, 1, 4, 10], [1, 1, 0.7, 1.7],
                                     mode="cubic",
                                     coordinate_transformation_mode="align_corners"),
    "linear_antialias": lambda: _run_time([1, 2, 9, 8], [1, 2, 3, 5], [1, 1, 0.35, 0.7],
                                          mode="linear", antialias=1),
    "axes_3_2": lambda: _run_time([1, 2, 3, 5], [1, 2, 7, 4], [0.8, 2.5], axes=[3, 2],
                                  mode="linear"),
}


def _import(raw: bytes, tmp_path: Path) -> Any:
    from tvmdev.frontends.importer import import_file
    (tmp_path / "m.onnx").write_bytes(raw)
    return import_file(tmp_path / "m.onnx").to_model()


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_time_scales_against_onnxruntime(name: str, tmp_path: Path) -> None:
    from tvmdev.model.reference import evaluate
    raw, feeds = CASES[name]()
    m = _import(raw, tmp_path)
    assert [o.op for o in m.operators] == ["resize"] and len(m.inputs) == 2
    (want,) = ort_run(raw, feeds)
    got = evaluate(m, dict(zip(m.inputs, feeds.values(), strict=True)))[m.outputs[0]]
    assert got.shape == want.shape and np.allclose(got, want, atol=ATOL, rtol=RTOL)


def test_scales_giving_another_shape_fail_the_run(tmp_path: Path) -> None:
    """The output's shape is static: scales that would give another one are an error of
    the run, named in one line (ONNX Runtime would return a [1, 2, 12, 3] output)."""
    from tvmdev.model.reference import evaluate
    raw, feeds = CASES["nearest"]()
    m = _import(raw, tmp_path)
    feeds["scales"] = np.array([1, 1, 3, 0.5], np.float32)
    assert ort_run(raw, feeds)[0].shape == (1, 2, 12, 3)
    with pytest.raises(TvmdevError) as exc:
        evaluate(m, dict(zip(m.inputs, feeds.values(), strict=True)))
    assert exc.value.message == (
        "resize: the scales [1.0, 1.0, 3.0, 0.5] computed at run time give [12, 3] in H and "
        "W (other scales 1), not the output's static [8, 3]: the run fails")


def test_unknown_output_shape_is_refused(tmp_path: Path) -> None:
    """A declared output of symbolic H and W (ONNX's shape inference cannot size it from
    scales it does not know) has no static shape to plan."""
    raw, _ = _run_time([1, 2, 4, 6], [1, 2, "h", "w"], [1, 1, 2, 0.5])
    with pytest.raises(TvmdevError) as exc:
        _import(raw, tmp_path)
    assert "Resize (scales computed at run time, and the output's static shape unknown" \
        in exc.value.message


@pytest.mark.slow
def test_run_time_scales_built_and_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Each case built and run with ``tvmdev run`` on the host: PASS against the
    reference (held against ONNX Runtime above); scales giving another shape fail."""
    need_tool("gcc", "apt install gcc")
    for name in [*sorted(CASES), "wrong"]:
        raw, feeds = CASES["nearest" if name == "wrong" else name]()
        if name == "wrong":
            feeds["scales"] = np.array([1, 1, 3, 0.5], np.float32)
        folder = tmp_path / name
        (folder / "in").mkdir(parents=True)
        (folder / "m.onnx").write_bytes(raw)
        for k, v in feeds.items():
            np.save(folder / "in" / f"{k}.npy", v)
        r = cli("run", str(folder / "m.onnx"), "--inputs", str(folder / "in"),
                "--build-dir", str(folder / "b"))
        if name == "wrong":
            assert r.code == 1 and "computed at run time give [12, 3]" in r.err, r.out + r.err
        else:
            assert r.code == 0 and r.out.rstrip().endswith("PASS"), name + r.out + r.err
