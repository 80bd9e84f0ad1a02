"""ONNX models found by fuzzing the importer (issue 21): each is one line naming the
model, exit 1 and nothing written, by import, aot and run alike. Some raised a
traceback, some ONNX Runtime refuses but tvmdev took. ONNX's own checks (the checker in
full, strict shape inference) now refuse many of them first; tvmdev's own checks stay
for what gets past those (operators of other domains, which ONNX does not infer), and
are tested here with ONNX's checks switched off too."""

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


def _value_info_float16() -> bytes:
    m = onnx.load_model_from_string(B.model([n("Relu", ["x"], ["a"]), n("Relu", ["a"], ["y"])],
                                            [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])]))
    m.graph.value_info.append(B.tensor("a", [1, 4], onnx.TensorProto.FLOAT16))
    return bytes(m.SerializeToString())


def _softmax_0d() -> bytes:
    return B.model([n("ReduceMean", ["x"], ["s"], keepdims=0), n("Softmax", ["s"], ["t"]),
                    n("Add", ["x", "t"], ["y"])], [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])])


def _batch_norm_0d_scale() -> bytes:
    stats = [B.init("s", np.float32(1.0))] + [B.init(k, np.full(3, v, np.float32))
                                              for k, v in (("b", 0.0), ("m", 0.0), ("v", 1.0))]
    return B.model([n("BatchNormalization", ["x", *"sbmv"], ["y"], name="bn")],
                   [B.tensor("x", [1, 3, 4, 4])], [B.tensor("y", [1, 3, 4, 4])], stats)


def _divide_by_0() -> bytes:
    """x reshaped to [4, 4] / [4, 0]: an integer division by 0, once folded as 0 (and so
    the Reshape copying x's dim)."""
    return B.model([n("Div", ["a", "z"], ["q"], name="div"), n("Reshape", ["x", "q"], ["y"])],
                   [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   [B.init("a", np.array([4, 4], np.int64)),
                    B.init("z", np.array([4, 0], np.int64))])


def _divide_overflow() -> bytes:
    """x reshaped to [-1] / [INT64_MIN, -1] // -1: a quotient int64 cannot hold (numpy
    wraps it; ONNX Runtime traps)."""
    low = np.iinfo(np.int64).min
    return B.model([n("Div", ["a", "z"], ["q"], name="div"), n("Reshape", ["x", "q"], ["y"])],
                   [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   [B.init("a", np.array([low, 4], np.int64)),
                    B.init("z", np.array([-1, 1], np.int64))])


ONNX = None  # ONNX's checks refuse the model first (their message is theirs: one line)
MODELS: dict[str, tuple[Callable[[], bytes], str, str, str | None]] = {
    # name: (model, tvmdev's own message, its hint, the message seen with ONNX's checks on
    # where it is tvmdev's own)
    "conv_same_stride_0": (lambda: _window("Conv", strides=[0, 1], auto_pad="SAME_UPPER"),
                           "Conv writing 'y': strides [0, 1] must each be >= 1", STEP_HINT, ONNX),
    "maxpool_same_stride_0": (lambda: _window("MaxPool", strides=[1, 0],
                                              auto_pad="SAME_LOWER"),
                              "MaxPool writing 'y': strides [1, 0] must each be >= 1",
                              STEP_HINT, ONNX),
    "avgpool_same_stride_neg": (lambda: _window("AveragePool", strides=[-1, 1],
                                                auto_pad="SAME_UPPER"),
                                "AveragePool writing 'y': strides [-1, 1] must each be >= 1",
                                STEP_HINT, ONNX),
    "conv_dilation_0": (lambda: _window("Conv", dilations=[1, 0]),
                        "Conv writing 'y': dilations [1, 0] must each be >= 1", STEP_HINT,
                        ONNX),
    "slice_0d": (_slice_0d, "node 0 'sl' Slice: slices a 0-d value (a scalar); Slice's data "
                            "has at least one dim", _page("Slice"), ONNX),
    "batch_norm_lengths": (lambda: _batch_norm((3, 2, 3, 1)),
                           "BatchNormalization node 0 'bn': scale, B, mean and var must each "
                           "be 1-D with one value per channel (3: input [1, 3, 4, 4]); their "
                           "shapes are [3], [2], [3], [1]", _page("BatchNormalization"),
                           "own"),
    # ONNX Runtime refuses these; tvmdev took them.
    "value_info_float16": (_value_info_float16, "1 unsupported operator: Relu (float16) x1 "
                           "(first: node 0 'a')", "tvmdev maps these ONNX operators: ", ONNX),
    "softmax_0d": (_softmax_0d, "Softmax writing 't': its input is 0-d; ONNX's Softmax takes at "
                                "least one dim", _page("Softmax"), ONNX),
    "batch_norm_0d_scale": (_batch_norm_0d_scale,
                            "BatchNormalization node 0 'bn': scale, B, mean and var must each "
                            "be 1-D with one value per channel (3: input [1, 3, 4, 4]); their "
                            "shapes are [], [3], [3], [3]", _page("BatchNormalization"), "own"),
    "integer_division_by_0": (_divide_by_0, "node 0 'div' Div: divides integers by 0 (B is "
                                            "[4, 0]); ONNX does not define an integer "
                                            "division by 0", _page("Div"), "own"),
    "integer_division_overflow": (_divide_overflow, "node 0 'div' Div: divides int64's "
                                  "minimum -9223372036854775808 by -1; the quotient "
                                  "9223372036854775808 does not fit (ONNX Runtime traps on "
                                  "it)", _page("Div"), "own"),
}


def _lines(cli: Callable[..., Result], model: Path, tmp_path: Path,
           commands: tuple[str, ...] = ("import", "aot", "run")) -> list[list[str]]:
    """The error lines of ``commands`` on ``model``: each exit 1, one line naming the
    model (and a hint), no traceback, nothing written."""
    out = []
    for command in commands:
        r = cli(command, str(model), "--build-dir" if command == "run" else "-o",
                str(tmp_path / "o"))
        assert r.code == 1, (command, r.out, r.err)
        assert "Traceback" not in r.err and not (tmp_path / "o").exists()
        lines = r.err.splitlines()
        assert lines[0].startswith(f"tvmdev: {model}: "), lines
        assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("  hint: ")), lines
        out.append(lines)
    return out


@pytest.mark.parametrize("case", sorted(MODELS))
def test_refused_in_one_line(case: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    make, message, hint, seen = MODELS[case]
    model = tmp_path / f"{case}.onnx"
    model.write_bytes(make())
    for lines in _lines(cli, model, tmp_path):
        if seen is ONNX:
            assert len(lines) == 1 and lines[0].startswith(
                f"tvmdev: {model}: invalid ONNX model: "), lines
        else:
            assert lines == [f"tvmdev: {model}: {message}", f"  hint: {hint}"]


@pytest.fixture
def without_onnx_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX's checker and strict shape inference switched off: tvmdev's own checks are
    what a model meets."""
    from tvmdev.frontends import onnx_read
    monkeypatch.setattr(onnx_read, "check_strictly", lambda onnx, model, path: None)


@pytest.mark.parametrize("case", sorted(k for k, v in MODELS.items() if v[3] is ONNX))
def test_tvmdevs_own_checks(case: str, cli: Callable[..., Result], tmp_path: Path,
                            without_onnx_checks: None) -> None:
    make, message, hint, _ = MODELS[case]
    model = tmp_path / f"{case}.onnx"
    model.write_bytes(make())
    [lines] = _lines(cli, model, tmp_path, ("import",))
    assert lines[0] == f"tvmdev: {model}: {message}"
    assert lines[1].startswith(f"  hint: {hint}"), lines


def test_onnx_runtime_refuses_them_too(tmp_path: Path) -> None:
    """The models ONNX Runtime refused (why tvmdev refuses them): it still does."""
    import onnxruntime as ort
    for case in ("value_info_float16", "softmax_0d", "batch_norm_0d_scale",
                 "integer_division_by_0"):
        model = tmp_path / f"{case}.onnx"
        model.write_bytes(MODELS[case][0]())
        with pytest.raises(Exception):  # noqa: B017 (its own exception types)
            s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
            s.run(None, {"x": np.zeros(s.get_inputs()[0].shape, np.float32)})


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


EDITS = [("QDQ", "MaxPool", "strides"), ("QOperator", "MaxPool", "strides"),
         ("QDQ", "Conv", "pads"), ("QOperator", "QLinearConv", "pads")]
MISFIT = "does not flatten to rows of 32 values (weights [10, 32])"


@pytest.mark.parametrize(("fmt", "op", "key"), EDITS)
def test_int8_cnn_with_a_window_attribute_removed(fmt: str, op: str, key: str,
                                                  cli: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    """ONNX infers the QDQ model's shapes and sees the mismatch; the QOperator model's
    com.microsoft operators it does not infer, and tvmdev sees it."""
    model = _edited(tmp_path, fmt, op, key)
    for lines in _lines(cli, model, tmp_path):
        if fmt == "QDQ":
            assert lines[0].startswith(f"tvmdev: {model}: invalid ONNX model: "), lines
        else:  # QGemm is ONNX Runtime's operator: the hint is its page
            assert MISFIT in lines[0] and "com.microsoft.QGemm" in lines[0], lines
            assert lines[1] == "  hint: QGemm's operands and attributes: https://github.com/" \
                "microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QGemm"


@pytest.mark.parametrize(("fmt", "op", "key"), [e for e in EDITS if e[0] == "QDQ"])
def test_int8_cnn_refused_by_tvmdev_alone(fmt: str, op: str, key: str,
                                          cli: Callable[..., Result], tmp_path: Path,
                                          without_onnx_checks: None) -> None:
    model = _edited(tmp_path, fmt, op, key)
    [lines] = _lines(cli, model, tmp_path, ("import",))
    assert MISFIT in lines[0] and len(lines) == 2 and "Gemm" in lines[1], lines


@pytest.mark.parametrize("case", ["value_info_float16", "softmax_0d"])
def test_the_full_checker_infers_shapes_strictly(case: str) -> None:
    """The importer runs onnx's checker in full and no second strict shape inference:
    these models pass the checker's structural checks and only strict, type-checked
    inference refuses them, which the full check runs."""
    model = onnx.load_model_from_string(MODELS[case][0]())
    onnx.checker.check_model(model)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(model, full_check=True)
