"""Seeded random Conv, MaxPool and AveragePool nodes (1-D, 2-D and, for the pools, 3-D;
strides, explicit pads or auto_pad, dilations, ceil_mode, count_include_pad, groups)
against ONNX Runtime: each imports and its numpy reference matches, or is refused with
one of the stated reasons, or ONNX Runtime itself rejects it. None is wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_module

from tvmdev.errors import TvmdevError
from tvmdev.model import reference
from tvmdev.run.compare import ATOL, RTOL

need_module("onnx", "pip install -e '.[test]'")
need_module("onnxruntime", "pip install -e '.[test]'")
import onnx  # noqa: E402
from onnx_cases import ort_run  # noqa: E402

from tvmdev.frontends import onnx as frontend  # noqa: E402

# What tvmdev refuses of these nodes, and why: ONNX pads SAME pool windows negatively
# when the stride is larger than the window (ONNX Runtime then refuses a MaxPool and
# shifts an AveragePool); a window larger than the padded input has no output.
REASONS = ("with a stride larger than the window", "is larger than the padded input")


def _node(rng: np.random.Generator) -> tuple[str, dict[str, Any], list[int], Any]:
    op = str(rng.choice(["MaxPool", "AveragePool", "Conv"]))
    sd = int(rng.integers(1, 3 if op == "Conv" else 4))
    size = [int(rng.integers(3, 9)) for _ in range(sd)]
    k = [int(rng.integers(1, 4)) for _ in range(sd)]
    # Strides up to 5 over windows of 1 and 2: ONNX's SAME pads go negative.
    attrs: dict[str, Any] = {"strides": [int(rng.integers(1, 6 if kk < 3 else 4))
                                         for kk in k]}
    mode = str(rng.choice(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if mode == "NOTSET":
        attrs["pads"] = [int(rng.integers(0, kk)) for kk in k * 2]
        attrs["dilations"] = [int(rng.integers(1, 3)) for _ in range(sd)]
    else:  # ONNX Runtime takes no dilations with auto_pad SAME
        attrs["auto_pad"] = mode
    weights = None
    if op == "Conv":
        attrs["group"] = int(rng.choice([1, 2]))
        weights = rng.uniform(-1, 1, [4, 2 // attrs["group"], *k]).astype(np.float32)
    else:
        attrs["kernel_shape"] = k
        attrs["ceil_mode"] = int(rng.integers(0, 2))
    if op == "AveragePool":
        attrs["count_include_pad"] = int(rng.integers(0, 2))
    return op, attrs, [1, 2, *size], weights


def _model(op: str, attrs: dict[str, Any], shape: list[int], weights: Any) -> bytes:
    from onnx import helper, numpy_helper
    y = onnx.ValueInfoProto()
    y.name = "y"
    y.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    inits = [] if weights is None else [numpy_helper.from_array(weights, "w")]
    graph = helper.make_graph([helper.make_node(op, ["x"] + ["w"] * bool(inits), ["y"],
                                                **attrs)],
                              "g", [helper.make_tensor_value_info("x", 1, shape)], [y], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    for i, d in enumerate(m.graph.output[0].type.tensor_type.shape.dim):
        d.dim_param = f"d{i}"  # the rank only: onnx's inference keeps a ceil_mode pool's
        # last window where it would start in the padding; ONNX Runtime and tvmdev drop it
    return bytes(m.SerializeToString())


# The 400 random nodes in two shards: the first 100 in the fast lane, the rest slow.
@pytest.mark.parametrize("first,last", [(0, 100), pytest.param(100, 400,
                                                              marks=pytest.mark.slow)])
def test_random_windows_against_onnxruntime(first: int, last: int) -> None:
    rng = np.random.default_rng(2024)
    counts = {"match": 0, "refused": 0, "ort refuses": 0}
    wrong = []
    for i in range(last):
        op, attrs, shape, weights = _node(rng)
        raw = _model(op, attrs, shape, weights)
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        if i < first:
            continue  # drawn, so that each shard sees the same nodes as one run of 400
        try:
            want = ort_run(raw, {"x": x})[0]
        except Exception:  # ONNX Runtime rejects the node: nothing to match
            counts["ort refuses"] += 1
            continue
        try:
            model = frontend.convert(Path("w.onnx"), raw, "w").to_model()
        except TvmdevError as exc:
            assert any(r in exc.message for r in REASONS), (op, attrs, shape, exc.message)
            counts["refused"] += 1
            continue
        got = reference.evaluate(model, {model.inputs[0]: x})[model.outputs[0]]
        if got.shape != want.shape or not np.allclose(got, want, atol=ATOL, rtol=RTOL):
            wrong.append((op, attrs, shape))
        counts["match"] += 1
    print(f"\nrandom windows {first}-{last}: {counts}")
    assert not wrong, wrong
    assert counts["match"] > 3 * (last - first) // 4  # 300 of the 400


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_same_padded_negatively(mode: str) -> None:
    """ONNX pads a SAME Conv negatively where the stride is larger than the window; ONNX
    Runtime then shifts the windows (from a pad of -2 on): refused. A pad of -1 (a 1x1
    stride-2 conv of an even size) shifts nothing and matches."""
    rng = np.random.default_rng(7)
    for size, k, stride, refused in ((8, 1, 4, True), (9, 1, 5, True), (9, 2, 5, True),
                                     (8, 1, 2, False), (7, 2, 4, False)):
        weights = rng.uniform(-1, 1, [3, 2, k, k]).astype(np.float32)
        raw = _model("Conv", {"auto_pad": mode, "strides": [stride, stride]},
                     [1, 2, size, size], weights)
        if refused:
            with pytest.raises(TvmdevError, match=f"auto_pad {mode} with a stride larger"):
                frontend.convert(Path("c.onnx"), raw, "c")
            continue
        x = rng.uniform(-1, 1, [1, 2, size, size]).astype(np.float32)
        model = frontend.convert(Path("c.onnx"), raw, "c").to_model()
        got = reference.evaluate(model, {model.inputs[0]: x})[model.outputs[0]]
        want = ort_run(raw, {"x": x})[0]
        assert got.shape == want.shape and np.allclose(got, want, atol=ATOL, rtol=RTOL)


def _two_maxpools() -> bytes:
    """x [1, 1, 2, 5] -> a MaxPool whose every window lies in the padding (rows -1 and 2:
    dilation 3, pads 1) -> y1; a 2x2 MaxPool -> y2."""
    from onnx import helper
    nodes = [helper.make_node("MaxPool", ["x"], ["y1"], kernel_shape=[2, 2],
                              dilations=[3, 1], pads=[1, 0, 1, 0]),
             helper.make_node("MaxPool", ["x"], ["y2"], kernel_shape=[2, 2])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1, 1, 2, 5])],
                              [helper.make_tensor_value_info("y1", 1, [1, 1, 1, 4]),
                               helper.make_tensor_value_info("y2", 1, [1, 1, 1, 4])])
    return bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                 .SerializeToString())


@pytest.mark.slow
def test_maxpool_window_without_an_input_value(cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    """A float MaxPool window wholly in the padding is float32's lowest value, -FLT_MAX,
    in the numpy reference and in C, as ONNX Runtime (and TFLite's kernels, which start
    their maximum there) give it; once the reference said NaN and the C kernel -inf. NaN
    taps are skipped: a window of NaNs alone gives -FLT_MAX too (ONNX Runtime's MLAS
    kernel gives NaN there, TFLite's reference kernel -FLT_MAX)."""
    raw = _two_maxpools()
    x = np.arange(10, dtype=np.float32).reshape(1, 1, 2, 5)
    x[0, 0, :, :2] = np.nan  # y2's first window: NaNs alone
    lowest = np.finfo(np.float32).min
    y1, y2 = ort_run(raw, {"x": x})
    assert np.array_equal(y1, np.full((1, 1, 1, 4), lowest, np.float32))
    want2 = np.array([[[[lowest, 7, 8, 9]]]], np.float32)
    assert np.isnan(y2[0, 0, 0, 0]) and np.array_equal(y2[..., 1:], want2[..., 1:])
    model = frontend.convert(Path("m.onnx"), raw, "m").to_model()
    got = reference.evaluate(model, {"x": x})
    assert np.array_equal(got["y1"], y1) and np.array_equal(got["y2"], want2)
    (tmp_path / "m.onnx").write_bytes(raw)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", x)
    r = cli("run", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert np.array_equal(np.load(tmp_path / "out" / "y1.npy"), y1)
    assert np.array_equal(np.load(tmp_path / "out" / "y2.npy"), want2)
