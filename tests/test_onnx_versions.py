"""ONNX opsets up to the newest the installed onnx defines, each node's version in effect
checked against the versions tvmdev implements (tvmdev/frontends/onnx_versions.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_module

need_module("onnx", "pip install -e '.[onnx]'")
import onnx  # noqa: E402
import onnx_build as B  # noqa: E402
from onnx import helper  # noqa: E402

from tvmdev.frontends import onnx as frontend  # noqa: E402
from tvmdev.frontends import onnx_versions  # noqa: E402
from tvmdev.frontends.onnx_fold import FOLDERS  # noqa: E402
from tvmdev.frontends.onnx_ops import CONVERTERS  # noqa: E402
from tvmdev.model import reference  # noqa: E402

NEWEST = onnx.defs.onnx_opset_version()


def test_every_listed_version_is_one_of_onnx() -> None:
    """Each version listed is a since_version of the operator, and every operator the
    importer maps or folds is listed."""
    for op, versions in onnx_versions.VERSIONS.items():
        assert list(versions) == sorted(set(versions)), op
        for v in versions:
            assert onnx.defs.get_schema(op, max_inclusive_version=v).since_version == v, (op, v)
    mapped = {*CONVERTERS, *FOLDERS, *frontend.REMOVED}
    assert mapped <= set(onnx_versions.VERSIONS), sorted(mapped - set(onnx_versions.VERSIONS))


def _shape_arithmetic(opset: int) -> bytes:
    """x -> Reshape(x, Cast(Shape(x)[::-1] as float, back to int64)) -> Relu: the shape
    folded through Cast (version 28 at opset 28)."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"]), n("Cast", ["s"], ["f"], to=onnx.TensorProto.FLOAT),
             n("Cast", ["f"], ["i"], to=onnx.TensorProto.INT64),
             n("Reshape", ["x", "i"], ["r"]), n("Relu", ["r"], ["y"])]
    return B.model(nodes, [B.tensor("x", [2, 6])], [B.tensor("y", [2, 6])], opset=opset)


@pytest.mark.parametrize("opset", [25, 26, NEWEST])
def test_newest_opsets_import(opset: int) -> None:
    """A model at each opset from 25 to the newest imports; its reference is numpy's."""
    m = frontend.convert(Path("m.onnx"), _shape_arithmetic(opset), "m").to_model()
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)
    got = reference.evaluate(m, {m.inputs[0]: x})[m.outputs[0]]
    assert np.array_equal(got, np.maximum(x, 0))


def test_unknown_version_refused(cli: Callable[..., Result], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A version tvmdev has not reviewed (as after an onnx upgrade) is one line, listed
    with the other unsupported operators."""
    monkeypatch.setitem(onnx_versions.VERSIONS, "Relu", (1, 6, 13))
    monkeypatch.setitem(onnx_versions.VERSIONS, "Softmax", (1, 11))
    n = helper.make_node
    path = tmp_path / "m.onnx"
    path.write_bytes(B.model([n("Relu", ["x"], ["r"]), n("Softmax", ["r"], ["y"])],
                             [B.tensor("x", [2, 6])], [B.tensor("y", [2, 6])], opset=NEWEST))
    r = cli("import", str(path), "-o", str(tmp_path / "o"))
    assert r.code == 1
    lines = r.err.splitlines()
    assert lines[0] == (
        f"tvmdev: {path}: 2 unsupported operators: Relu (version 14, in effect at opset "
        f"{NEWEST}; tvmdev implements versions 1, 6, 13) x1 (first: node 0 'r'); Softmax "
        f"(version 13, in effect at opset {NEWEST}; tvmdev implements versions 1, 11) x1 "
        "(first: node 1 'y')")
    assert len(lines) == 2 and lines[1].startswith("  hint: tvmdev maps these ONNX operators")
    assert not (tmp_path / "o").exists()


def test_unknown_version_refused_in_quantized_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quantized (QDQ) path checks the versions too."""
    from tvmdev.errors import TvmdevError
    monkeypatch.setitem(onnx_versions.VERSIONS, "QuantizeLinear", (10,))
    n = helper.make_node
    raw = B.model([n("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant"),
                   n("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant")],
                  [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                  [B.init("s", np.float32(0.5)), B.init("z", np.int8(0))])
    with pytest.raises(TvmdevError) as exc:
        frontend.convert(Path("m.onnx"), raw, "m")
    assert exc.value.message.startswith(
        "1 unsupported operator: QuantizeLinear (version 13, in effect at opset 13; tvmdev "
        "implements versions 10) x1 (first: node 0 'quant')")
