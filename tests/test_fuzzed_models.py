"""ONNX models found by fuzzing the importer (issue 21) that raised a traceback: each is
one line naming the model, with a hint, exit 1 and nothing written, by import, aot and
run alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_module

need_module("onnx", "pip install -e '.[onnx]'")
need_module("onnxruntime", "pip install -e '.[test]'")
import onnx  # noqa: E402
import onnx_build as B  # noqa: E402
from onnx import helper  # noqa: E402
from onnx_qdq_models import cnn, quantize  # noqa: E402
from onnxruntime import quantization as oq  # noqa: E402

n = helper.make_node
STEP_HINT = "a window steps by one element or more: the model is corrupt or was edited by hand"


def _page(kind: str) -> str:
    return f"{kind}'s operands and attributes: https://onnx.ai/onnx/operators/onnx__{kind}.html"


def _window(op: str, **attrs: Any) -> bytes:
    """x [1, 3, 8, 8] -> op (a Conv by 2 3x3 filters, or a 2x2 pool) -> y."""
    inits = [B.init("w", np.ones((2, 3, 3, 3), np.float32))] if op == "Conv" else []
    ins = ["x", "w"] if op == "Conv" else ["x"]
    if op != "Conv":
        attrs = {"kernel_shape": [2, 2], **attrs}
    return B.model([n(op, ins, ["y"], name="win", **attrs)], [B.tensor("x", [1, 3, 8, 8])],
                   [B.tensor("y", ["N", "C", "H", "W"])], inits)


def _slice_0d() -> bytes:
    return B.model([n("Slice", ["c", "st", "en"], ["s"], name="sl"), n("Add", ["x", "s"], ["y"])],
                   [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   [B.init("c", np.float32(1.0)), B.init("st", np.array([0], np.int64)),
                    B.init("en", np.array([1], np.int64))])


def _batch_norm(lengths: tuple[int, int, int, int]) -> bytes:
    stats = [B.init(k, np.ones(c, np.float32)) for k, c in zip("sbmv", lengths, strict=True)]
    return B.model([n("BatchNormalization", ["x", *"sbmv"], ["y"], name="bn")],
                   [B.tensor("x", [1, 3, 4, 4])], [B.tensor("y", [1, 3, 4, 4])], stats)


MODELS: dict[str, tuple[Callable[[], bytes], str, str]] = {
    # name: (model, tvmdev's own message, its hint)
    "conv_same_stride_0": (lambda: _window("Conv", strides=[0, 1], auto_pad="SAME_UPPER"),
                           "Conv writing 'y': strides [0, 1] must each be >= 1", STEP_HINT),
    "maxpool_same_stride_0": (lambda: _window("MaxPool", strides=[1, 0],
                                              auto_pad="SAME_LOWER"),
                              "MaxPool writing 'y': strides [1, 0] must each be >= 1",
                              STEP_HINT),
    "avgpool_same_stride_neg": (lambda: _window("AveragePool", strides=[-1, 1],
                                                auto_pad="SAME_UPPER"),
                                "AveragePool writing 'y': strides [-1, 1] must each be >= 1",
                                STEP_HINT),
    "conv_dilation_0": (lambda: _window("Conv", dilations=[1, 0]),
                        "Conv writing 'y': dilations [1, 0] must each be >= 1", STEP_HINT),
    "slice_0d": (_slice_0d, "node 0 'sl' Slice: slices a 0-d value (a scalar); Slice's data "
                            "has at least one dim", _page("Slice")),
    "batch_norm_lengths": (lambda: _batch_norm((3, 2, 3, 1)),
                           "BatchNormalization node 0 'bn': scale, B, mean and var must each "
                           "be 1-D with one value per channel (3: input [1, 3, 4, 4]); their "
                           "shapes are [3], [2], [3], [1]", _page("BatchNormalization")),
}


def _refused(cli: Callable[..., Result], model: Path, tmp_path: Path) -> list[list[str]]:
    """The error lines of import, aot and run of ``model``: each exit 1, nothing written."""
    out = []
    for argv in (["import", str(model), "-o", str(tmp_path / "o")],
                 ["aot", str(model), "-o", str(tmp_path / "o")],
                 ["run", str(model), "--build-dir", str(tmp_path / "o")]):
        r = cli(*argv)
        assert r.code == 1, (argv, r.out, r.err)
        assert "Traceback" not in r.err and not (tmp_path / "o").exists()
        lines = r.err.splitlines()
        assert lines[0].startswith(f"tvmdev: {model}: ") and len(lines) == 2, lines
        assert lines[1].startswith("  hint: "), lines
        out.append(lines)
    return out


@pytest.mark.parametrize("case", sorted(MODELS))
def test_refused_in_one_line(case: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    make, message, hint = MODELS[case]
    model = tmp_path / f"{case}.onnx"
    model.write_bytes(make())
    for lines in _refused(cli, model, tmp_path):
        assert lines == [f"tvmdev: {model}: {message}", f"  hint: {hint}"]


def _edited(tmp: Path, fmt: str, op: str, key: str) -> Path:
    """onnxruntime's int8 cnn (QDQ or QOperator) with ``key`` removed from the first
    ``op`` node: the shapes after it no longer fit the weights."""
    path, _ = quantize(tmp, cnn, False, quant_format=getattr(oq.QuantFormat, fmt))
    m = onnx.load(str(path))
    node = next(node for node in m.graph.node if node.op_type == op)
    attrs = [a for a in node.attribute if a.name != key]
    assert len(attrs) < len(node.attribute)
    del node.attribute[:]
    node.attribute.extend(attrs)
    edited = tmp / f"{fmt}_{op}_{key}.onnx"
    onnx.save(m, str(edited))
    return edited


@pytest.mark.parametrize(("fmt", "op", "key"), [
    ("QDQ", "MaxPool", "strides"), ("QOperator", "MaxPool", "strides"),
    ("QDQ", "Conv", "pads"), ("QOperator", "QLinearConv", "pads")])
def test_int8_cnn_with_a_window_attribute_removed(fmt: str, op: str, key: str,
                                                  cli: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    model = _edited(tmp_path, fmt, op, key)
    for lines in _refused(cli, model, tmp_path):
        assert "does not flatten to rows of 32 values (weights [10, 32])" in lines[0] or \
            "invalid ONNX model" in lines[0], lines[0]
