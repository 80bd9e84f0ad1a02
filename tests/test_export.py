"""The description ``tvmdev import`` writes is an export of the imported model: loading
it back gives an equal model (every tensor's shape, dtype, role, C name and
quantization; every operator's op, tensors, attributes as given and as resolved, device
and C name; the devices; every constant's values), for real TFLite models (int8 and
float32), ONNX models (batch norm folded, a 1-D convolution, int8 QDQ) and models placed
on devices. A description exported from a loaded one (4-bit constants included) loads
back equal too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_module

from tvmdev.errors import Where
from tvmdev.load.export import npy_files, yaml_text
from tvmdev.load.model import load_model
from tvmdev.model.graph import Model

NOWHERE = Where("")
PLACED = ["--device", "npu0:woofles", "--device", "npu1:woofles",
          "--place", "conv2d,depthwise_conv2d=npu0", "--place", "fully_connected,gemm=npu1"]


def assert_equal(a: Model, b: Model) -> None:
    """``a`` and ``b`` are the same model (wherever each item came from)."""
    assert (a.name, a.inputs, a.outputs) == (b.name, b.inputs, b.outputs)
    assert [replace(d, where=NOWHERE) for d in a.devices] == \
        [replace(d, where=NOWHERE) for d in b.devices]
    assert list(a.tensors) == list(b.tensors)
    for name, t in a.tensors.items():
        assert replace(t, where=NOWHERE) == replace(b.tensors[name], where=NOWHERE), name
    assert len(a.operators) == len(b.operators)
    for op, other in zip(a.operators, b.operators, strict=True):
        assert replace(op, where=NOWHERE) == replace(other, where=NOWHERE), op.name
    assert list(a.constants) == list(b.constants)
    for name, data in a.constants.items():
        assert data.dtype == b.constants[name].dtype, name
        assert np.array_equal(data, b.constants[name]), name
    assert list(a.quantized) == list(b.quantized)
    for name, q in a.quantized.items():
        assert np.array_equal(q.data, b.quantized[name].data)
        assert np.array_equal(q.scales, b.quantized[name].scales)


def imported_and_loaded(cli: Callable[..., Result], path: Path, tmp_path: Path,
                        *options: str) -> tuple[Model, Model]:
    """The model imported in memory (placed with ``options``), and the one loaded from
    what ``tvmdev import`` wrote."""
    from tvmdev.frontends.importer import import_file

    r = cli("import", str(path), "-o", str(tmp_path / "o"), *options)
    assert r.code == 0, r.err
    im = import_file(path)
    devices = [options[i + 1] for i, o in enumerate(options) if o == "--device"]
    places = [options[i + 1] for i, o in enumerate(options) if o == "--place"]
    im.place(devices, places)
    return im.to_model(), load_model(tmp_path / "o" / f"{im.name}.yaml")


@pytest.mark.parametrize(("name", "placed"), [
    ("keyword_spotting.tflite", False), ("keyword_spotting.tflite", True),
    ("image_example1.float32.tflite", False), ("image_example1.float32.tflite", True)])
def test_tflite_round_trip(name: str, placed: bool, tflite_model: Callable[[str], Path],
                           cli: Callable[..., Result], tmp_path: Path) -> None:
    need_module("tflite", "pip install -e '.[tflite]'")
    imported, loaded = imported_and_loaded(cli, tflite_model(name), tmp_path,
                                           *(PLACED if placed else ()))
    assert_equal(imported, loaded)
    assert any(op.device for op in loaded.operators) == placed
    if name.startswith("keyword"):
        assert any(t.quant is not None and t.quant.per_channel
                   for t in loaded.tensors.values())


def _conv1d() -> bytes:
    """A 1-D Conv (its attributes resolve to 2-D ones) and a Relu."""
    import onnx_build as B
    from onnx import helper

    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 2], strides=[2]),
             helper.make_node("Relu", ["c"], ["y"])]
    inits = [B.init("w", rng.uniform(-1, 1, (4, 2, 3)).astype(np.float32)),
             B.init("b", rng.uniform(-1, 1, 4).astype(np.float32))]
    return B.model(nodes, [B.tensor("x", [1, 2, 9])], [B.tensor("y", [1, 4, 5])], inits)


@pytest.mark.parametrize("name", ["residual", "mobilenet", "conv1d"])
def test_onnx_round_trip(name: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    need_module("onnx", "pip install -e '.[onnx]'")
    import onnx_build

    path = tmp_path / f"{name}.onnx"
    path.write_bytes(_conv1d() if name == "conv1d" else getattr(onnx_build, name)())
    placed = PLACED if name != "conv1d" else ["--device", "npu0:woofles", "--place",
                                              "conv2d=npu0"]
    imported, loaded = imported_and_loaded(cli, path, tmp_path, *placed)
    assert_equal(imported, loaded)
    if name == "conv1d":
        conv = loaded.operators[0]
        assert dict(conv.given) == {"pads": (1, 2), "strides": (2,)}
        assert conv.attr_dict["strides"] == (1, 2)  # resolved: H = 1


def test_onnx_int8_round_trip(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Per-channel weights, int32 biases at input_scale * weight_scale, Relus fused."""
    need_module("onnxruntime", "pip install -e '.[onnx]'")
    from onnx_qdq_models import quantize, zoo

    path, _ = quantize(tmp_path, zoo, True)
    imported, loaded = imported_and_loaded(cli, path, tmp_path, *PLACED)
    assert_equal(imported, loaded)
    assert {t.dtype for t in loaded.tensors.values()} >= {"int8", "int32", "float32"}


@pytest.mark.parametrize("example", ["decoder", "cnn", "mlp"])
def test_described_model_round_trip(example: str, tmp_path: Path) -> None:
    """A hand-written description (4-bit constants, devices, inline and random values)
    exported and loaded again."""
    model = load_model(REPO / "examples" / example / f"{example}.yaml")
    (tmp_path / f"{model.name}.yaml").write_text(yaml_text(model, "exported"))
    for fname, data in npy_files(model).items():
        (tmp_path / fname).write_bytes(data)
    again = load_model(tmp_path / f"{model.name}.yaml")
    assert_equal(model, again)
    assert bool(again.quantized) == (example == "decoder")
