"""ONNX Slice, Split, ConvTranspose and Resize beyond ONNX's node cases
(tests/test_onnx_import.py), against ONNX Runtime: seeded variants of the attributes the
node cases leave out (1-D and grouped transposed convolutions with strides, pads,
output_padding, output_shape and constant weights with a bias; resizes by sizes and by
scales that do not divide, of one channel and several; backward slices of a computed
tensor; Split by attribute), imported and evaluated by the numpy reference, and (slow)
built and run with ``tvmdev run`` on the host."""

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
from onnx_build import init, model, tensor  # noqa: E402
from onnx_cases import ort_run  # noqa: E402

from tvmdev.run.compare import ATOL, RTOL  # noqa: E402


def _typed(raw: bytes) -> bytes:
    """The model with its outputs' shapes as ONNX's shape inference gives them."""
    import onnx
    m = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(raw), strict_mode=True)
    return bytes(m.SerializeToString())


def _tconv(x: list[int], w: list[int], bias: bool, **attrs: Any) -> tuple[bytes, list[int]]:
    r = np.random.default_rng(len(x) * 7 + sum(w))
    inits = [init("W", r.uniform(-1, 1, w).astype(np.float32))]
    ins = ["X", "W"]
    if bias:
        inits.append(init("B", r.uniform(-1, 1, [w[1] * attrs.get("group", 1)]).astype(
            np.float32)))
        ins.append("B")
    node = helper.make_node("ConvTranspose", ins, ["Y"], **attrs)
    return model([node], [tensor("X", x)], [tensor("Y", None)], inits, opset=13), x


def _resize(x: list[int], scales: list[float] | None, sizes: list[int] | None,
            opset: int = 13, roi: list[float] | None = None, **attrs: Any
            ) -> tuple[bytes, list[int]]:
    inits = [init("roi", np.array(roi or [], np.float32))]
    ins = ["X", "roi"]
    if scales is not None:
        inits.append(init("scales", np.array(scales, np.float32)))
        ins.append("scales")
    else:
        inits.append(init("sizes", np.array(sizes, np.int64)))
        ins += ["", "sizes"]
    node = helper.make_node("Resize", ins, ["Y"], **attrs)
    return model([node], [tensor("X", x)], [tensor("Y", None)], inits, opset=opset), x


def _slice(x: list[int], starts: list[int], ends: list[int], axes: list[int],
           steps: list[int]) -> tuple[bytes, list[int]]:
    inits = [init(n, np.array(v, np.int64)) for n, v in
             (("s", starts), ("e", ends), ("a", axes), ("t", steps))]
    nodes = [helper.make_node("Relu", ["X"], ["R"]),
             helper.make_node("Slice", ["R", "s", "e", "a", "t"], ["Y"])]
    return model(nodes, [tensor("X", x)], [tensor("Y", None)], inits, opset=13), x


def _split(x: list[int], axis: int, split: list[int]) -> tuple[bytes, list[int]]:
    outs = [f"Y{k}" for k in range(len(split))]
    node = helper.make_node("Split", ["X"], outs, axis=axis, split=split)
    return model([node], [tensor("X", x)], [tensor(o, None) for o in outs], opset=11), x


CASES: dict[str, Callable[[], tuple[bytes, list[int]]]] = {
    "tconv_1d_stride": lambda: _tconv([1, 3, 7], [3, 2, 4], True, strides=[2], pads=[1, 2],
                                      output_padding=[1]),
    "tconv_1d_same": lambda: _tconv([2, 4, 5], [4, 3, 3], False, strides=[3],
                                    auto_pad="SAME_LOWER"),
    "tconv_grouped": lambda: _tconv([1, 4, 4, 5], [4, 3, 3, 2], True, group=2,
                                    strides=[2, 3], dilations=[2, 1], pads=[1, 0, 0, 2]),
    "tconv_output_shape": lambda: _tconv([1, 2, 3, 3], [2, 3, 3, 3], True, strides=[2, 2],
                                         output_shape=[8, 7]),
    "tconv_same_upper": lambda: _tconv([1, 3, 4, 3], [3, 2, 4, 3], False, strides=[2, 2],
                                       auto_pad="SAME_UPPER"),
    "resize_linear_sizes": lambda: _resize([1, 3, 5, 4], None, [1, 3, 8, 9], mode="linear"),
    "resize_linear_scales": lambda: _resize([2, 2, 5, 7], [1, 1, 1.7, 0.6], None,
                                            mode="linear"),
    "resize_linear_asym": lambda: _resize([1, 1, 4, 6], [1, 1, 2.5, 1.5], None, mode="linear",
                                          coordinate_transformation_mode="asymmetric"),
    "resize_linear_align": lambda: _resize([1, 3, 6, 4], None, [1, 3, 4, 9], mode="linear",
                                           coordinate_transformation_mode="align_corners"),
    "resize_nearest_asym": lambda: _resize([1, 3, 4, 5], [1, 1, 2, 3], None,
                                           coordinate_transformation_mode="asymmetric",
                                           nearest_mode="floor"),
    "resize_nearest_tf": lambda: _resize(
        [1, 2, 6, 6], None, [1, 2, 4, 9],
        coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="floor"),
    "resize_nearest_half_ceil": lambda: _resize([1, 1, 3, 5], [1, 1, 2, 0.5], None,
                                                nearest_mode="round_prefer_ceil"),
    "resize_nearest_default": lambda: _resize([1, 3, 5, 7], [1, 1, 1.6, 0.7], None),
    "resize_nearest_ceil_sizes": lambda: _resize([1, 2, 7, 4], None, [1, 2, 3, 11],
                                                 coordinate_transformation_mode="asymmetric",
                                                 nearest_mode="ceil"),
    "resize_nearest_align_floor_pf": lambda: _resize(
        [1, 1, 5, 6], None, [1, 1, 9, 4], coordinate_transformation_mode="align_corners",
        nearest_mode="round_prefer_floor"),
    "resize_nearest_pytorch": lambda: _resize(
        [1, 3, 4, 4], [1, 1, 2.5, 0.75], None,
        coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="floor"),
    # tvmdev's resize (ONNX's arithmetic): cubic, antialias, half_pixel_symmetric
    "resize_cubic_scales": lambda: _resize([1, 2, 5, 7], [1, 1, 1.7, 0.6], None, mode="cubic"),
    "resize_cubic_sizes_exclude": lambda: _resize(
        [2, 1, 6, 4], None, [2, 1, 4, 9], mode="cubic", cubic_coeff_a=-0.5,
        exclude_outside=1),
    "resize_cubic_align": lambda: _resize([1, 3, 4, 6], None, [1, 3, 7, 3], mode="cubic",
                                          coordinate_transformation_mode="align_corners"),
    "resize_cubic_pytorch": lambda: _resize(
        [1, 2, 5, 5], None, [1, 2, 8, 3], mode="cubic",
        coordinate_transformation_mode="pytorch_half_pixel"),
    "resize_linear_antialias": lambda: _resize([1, 2, 9, 11], [1, 1, 0.4, 0.7], None, 18,
                                               mode="linear", antialias=1),
    "resize_cubic_antialias_sizes": lambda: _resize([1, 1, 12, 7], None, [1, 1, 5, 3], 18,
                                                    mode="cubic", antialias=1),
    "resize_linear_symmetric": lambda: _resize(
        [1, 2, 5, 6], [1, 1, 1.3, 0.45], None, 19, mode="linear",
        coordinate_transformation_mode="half_pixel_symmetric"),
    "resize_nearest_symmetric": lambda: _resize(
        [1, 1, 7, 4], [1, 1, 0.6, 2.2], None, 19, nearest_mode="round_prefer_ceil",
        coordinate_transformation_mode="half_pixel_symmetric"),
    "resize_linear_pytorch_to_1": lambda: _resize(
        [1, 3, 4, 5], None, [1, 3, 1, 7], mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel"),
    "resize_crop_linear": lambda: _resize(
        [1, 2, 6, 5], None, [1, 2, 4, 7], roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 0.7], mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-5.0),
    "resize_crop_cubic_axes": lambda: _resize(
        [1, 1, 7, 6], None, [9, 3], 18, roi=[0.4, 0.1, 1.2, 0.8], axes=[3, 2],
        mode="cubic", coordinate_transformation_mode="tf_crop_and_resize"),
    "resize_crop_nearest_to_1": lambda: _resize(
        [2, 1, 5, 5], [1, 1, 0.2, 1.5], None, roi=[0, 0, 0.3, 0.1, 1, 1, 0.6, 0.9],
        coordinate_transformation_mode="tf_crop_and_resize", nearest_mode="floor"),
    "slice_backward": lambda: _slice([4, 6, 5], [-1, 5, 0], [-10, 0, 5], [0, 1, 2],
                                     [-2, -1, 2]),
    "split_attr": lambda: _split([3, 7, 2], 1, [2, 4, 1]),
}


def _inputs(shape: list[int]) -> dict[str, np.ndarray]:
    return {"X": np.random.default_rng(sum(shape)).uniform(-3, 3, shape).astype(np.float32)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_onnxruntime(name: str, tmp_path: Path) -> None:
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    raw, shape = CASES[name]()
    raw = _typed(raw)
    (tmp_path / "m.onnx").write_bytes(raw)
    m = import_file(tmp_path / "m.onnx").to_model()
    feeds = _inputs(shape)
    want = ort_run(raw, feeds)
    got = evaluate(m, dict(zip(m.inputs, feeds.values(), strict=True)))
    for o, w in zip(m.outputs, want, strict=True):
        assert got[o].shape == w.shape and np.allclose(got[o], w, atol=ATOL, rtol=RTOL), o


@pytest.mark.slow
def test_built_and_run_on_host(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Each case built and run with ``tvmdev run`` (the C kernels): PASS against the
    reference, which the fast test holds against ONNX Runtime."""
    need_tool("gcc", "apt install gcc")
    for name in sorted(CASES):
        raw, shape = CASES[name]()
        raw = _typed(raw)
        folder = tmp_path / name
        (folder / "in").mkdir(parents=True)
        (folder / "m.onnx").write_bytes(raw)
        np.save(folder / "in" / "X.npy", _inputs(shape)["X"])
        r = cli("run", str(folder / "m.onnx"), "--inputs", str(folder / "in"),
                "--build-dir", str(folder / "b"))
        assert r.code == 0 and r.out.rstrip().endswith("PASS"), name + r.out + r.err
