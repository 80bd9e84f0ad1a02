"""Models with no inputs (ONNX's Constant node case, ``test_constant``: a graph whose only
node is a Constant and whose output is its value): the importer copies a graph output
known at import into the output, as ONNX Runtime returns it, and the executor, its
header and the harnesses build with no inputs. The reference is onnx's own expected
output of the case; the runs compare with it bit for bit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_module, need_tool

need_module("onnx", "pip install -e '.[onnx]'")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from tvmdev.frontends import onnx as frontend  # noqa: E402

VALUES = np.random.default_rng(3).standard_normal((5, 5)).astype(np.float32)
NO_INPUTS = """name: noin
outputs:
  y: {shape: [2, 3], dtype: float32}
constants:
  c: {shape: [2, 3], dtype: float32, values: [-2, -1, 0, 1, 2, 3]}
operators:
  - {name: r, op: relu, inputs: [c], outputs: [y]}
"""


def _constant_model(path: Path) -> Path:
    value = helper.make_tensor("v", TensorProto.FLOAT, VALUES.shape, VALUES.ravel())
    graph = helper.make_graph([helper.make_node("Constant", [], ["values"], value=value)],
                              "constant", [], [helper.make_tensor_value_info(
                                  "values", TensorProto.FLOAT, list(VALUES.shape))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_constant_output_is_copied_out(tmp_path: Path) -> None:
    path = _constant_model(tmp_path / "c.onnx")
    model = frontend.convert(path, path.read_bytes(), "c").to_model()
    assert list(model.inputs) == []
    (op,) = model.operators
    assert op.op == "reshape" and model.tensors[op.inputs[0]].role == "constant"
    assert list(model.outputs) == ["values"]


@pytest.mark.slow  # builds and runs
@pytest.mark.parametrize("board", ["host", "mps2_an386"])
def test_constant_model_runs(board: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    if board != "host":
        need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
        need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    r = cli("run", str(_constant_model(tmp_path / "c.onnx")), "--board", board,
            "--build-dir", str(tmp_path / "b"), "--save-outputs", str(tmp_path / "out"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert np.array_equal(np.load(tmp_path / "out/values.npy"), VALUES)


@pytest.mark.slow  # builds and runs
def test_a_description_without_inputs_runs(cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "noin.yaml").write_text(NO_INPUTS)
    r = cli("run", str(tmp_path / "noin.yaml"), "--build-dir", str(tmp_path / "b"),
            "--save-outputs", str(tmp_path / "out"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert np.array_equal(np.load(tmp_path / "out/y.npy"),
                          np.array([[0, 0, 0], [1, 2, 3]], np.float32))
