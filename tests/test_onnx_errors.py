"""Bad ONNX models: one line each (and a hint where there is one), exit 1, nothing
written; corrupt files never a traceback; the onnx extra missing; names and order of
inputs and outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import IN_CI, Result

try:
    import onnx  # noqa: F401
except ImportError:
    if IN_CI:
        raise AssertionError("onnx is missing (CI installs .[test])") from None
    pytest.skip("onnx is not installed: pip install -e '.[onnx]'", allow_module_level=True)

import onnx_build as B  # noqa: E402
from onnx import helper  # noqa: E402

n = helper.make_node


def _unsupported() -> bytes:
    nodes = [n("LeakyRelu", ["x"], ["a"], name="lr1"), n("Relu", ["a"], ["b"]),
             n("LeakyRelu", ["b"], ["c"], name="lr2"), n("Erf", ["c"], ["d"], name="erf"),
             n("FusedConv", ["d"], ["y"], domain="com.microsoft", name="fc")]
    return B.model(nodes, [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   domains={"com.microsoft": 1})


def _control_flow() -> bytes:
    then = helper.make_graph([n("Relu", ["x"], ["t"])], "then", [], [B.tensor("t", [1, 4])])
    other = helper.make_graph([n("Sigmoid", ["x"], ["e"])], "else", [],
                              [B.tensor("e", [1, 4])])
    return B.model([n("If", ["c"], ["y"], then_branch=then, else_branch=other,
                      name="branch")],
                   [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   [B.init("c", np.array(True))])


def _quantized() -> bytes:
    nodes = [n("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant"),
             n("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant")]
    return B.model(nodes, [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
                   [B.init("s", np.float32(0.5)), B.init("z", np.uint8(128))])


def _external() -> bytes:
    m = onnx.load_model_from_string(B.model(
        [n("Add", ["x", "w"], ["y"])], [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])],
        [B.init("w", np.ones((1, 4), np.float32))]))
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = onnx.TensorProto.EXTERNAL
    w.external_data.add(key="location", value="weights.bin")
    return bytes(m.SerializeToString())


TYPES = "tvmdev imports float32 models for now"
BAD: dict[str, tuple[str, Callable[[], bytes], str, str | None]] = {
    "truncated": ("t.onnx", lambda: B.residual()[:3000],
                  "corrupt or truncated ONNX model (3000 bytes)", None),
    "text": ("t.onnx", lambda: b"name: m\n", "corrupt or truncated ONNX model (8 bytes)",
             None),
    "empty": ("t.onnx", lambda: b"", "not an ONNX model (no graph with outputs)", None),
    "neither": ("t.bin", lambda: b"\x00" * 64, "neither a TFLite nor an ONNX model",
                "tvmdev import reads .tflite and .onnx files"),
    "dynamic": ("t.onnx", lambda: B.relu(B.tensor("x:0", ["N", 4]), B.tensor("y", ["N", 4])),
                "input 'x:0' has a dynamic shape [N, 4]", "fix it: --input-shape x_0=1,4"),
    "unsupported": ("t.onnx", _unsupported,
                    "4 unsupported operators: LeakyRelu x2 (first: node 0 'lr1'); Erf x1 "
                    "(first: node 3 'erf'); com.microsoft.FusedConv x1 (first: node 4 'fc')",
                    "tvmdev maps these ONNX operators: Add, AveragePool, "),
    "opset_old": ("t.onnx", lambda: B.relu(opset=6),
                  "the model uses opset 6 of the default domain (ai.onnx); tvmdev imports "
                  "opsets 7 to 25",
                  "convert it: onnx.version_converter.convert_version(model, 17)"),
    "opset_new": ("t.onnx", lambda: B.relu(opset=26),
                  "the model uses opset 26 of the default domain (ai.onnx); tvmdev imports "
                  "opsets 7 to 25", "convert it: "),
    "control_flow": ("t.onnx", _control_flow,
                     "the model has control flow (If x1 (first: node 0 'branch')); tvmdev "
                     "imports one graph without it", "export the model without control flow"),
    "quantized": ("t.onnx", _quantized,
                  "the model is quantized (QuantizeLinear x1 (first: node 0 'quant'), "
                  "DequantizeLinear x1 (first: node 1 'dequant')); tvmdev imports float32 "
                  "models for now, int8 comes next", "import the float32 model"),
    "int64_input": ("t.onnx", lambda: B.relu(B.tensor("x", [1, 4], 7), B.tensor("y", [1, 4], 7)),
                    f"input 'x' is int64; {TYPES}", None),
    "float16_input": ("t.onnx", lambda: B.relu(B.tensor("x", [1, 4], 10),
                                               B.tensor("y", [1, 4], 10)),
                      f"input 'x' is float16; {TYPES}", None),
    "conv3d": ("t.onnx", lambda: B.model(
        [n("Conv", ["x", "w"], ["y"], name="c3")], [B.tensor("x", [1, 2, 3, 4, 4])],
        [B.tensor("y", [1, 1, 2, 3, 3])], [B.init("w", np.ones((1, 2, 2, 2, 2), np.float32))]),
        "1 unsupported operator: Conv (3-D) x1 (first: node 0 'c3')", "tvmdev maps "),
    "pool_same_stride": ("t.onnx", lambda: B.model(
        [n("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[1], strides=[3],
           auto_pad="SAME_UPPER")], [B.tensor("x", [1, 2, 6])], [B.tensor("y", [1, 2, 2])]),
        "1 unsupported operator: MaxPool (auto_pad SAME_UPPER with a stride larger than the "
        "window) x1 (first: node 0 'mp')", "tvmdev maps "),
    "external_data": ("t.onnx", _external,
                      "initializer 'w' is stored in an external file; tvmdev reads "
                      "self-contained models", "save the model with its weights inside"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model(case: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    fname, make, message, hint = BAD[case]
    model = tmp_path / fname
    model.write_bytes(make())
    commands = [["import", str(model), "-o", str(tmp_path / "o")]]
    if fname.endswith(".onnx"):  # aot and run read anything else as a description
        commands += [["aot", str(model), "-o", str(tmp_path / "o")],
                     ["run", str(model), "--build-dir", str(tmp_path / "o")]]
    for argv in commands:
        r = cli(*argv)
        assert r.code == 1, (argv, r.out)
        lines = r.err.splitlines()
        assert lines[0] == f"tvmdev: {model}: {message}"
        if hint is None:
            assert len(lines) == 1, lines
        else:
            assert len(lines) == 2 and lines[1].startswith(f"  hint: {hint}"), lines
        assert not (tmp_path / "o").exists()


def test_dynamic_shape_fixed_by_option(cli: Callable[..., Result], tmp_path: Path) -> None:
    model = tmp_path / "dyn.onnx"
    model.write_bytes(B.relu(B.tensor("x:0", ["N", 4]), B.tensor("y", ["N", 4])))
    for key in ("x_0", "x:0"):
        r = cli("import", str(model), "-o", str(tmp_path / key), "--input-shape",
                f"{key}=3,4")
        assert r.code == 0, r.err
        assert "input x_0: [3, 4] float32" in r.out and "output y: [3, 4] float32" in r.out
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape", "z=1,7")
    assert r.code == 1
    assert r.err.splitlines()[0] == f"tvmdev: {model}: --input-shape z: no such input"
    assert not (tmp_path / "o").exists()


def test_without_the_extra(cli: Callable[..., Result], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"\x08\x08")
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1
    assert r.err.splitlines() == [f"tvmdev: {model}: reading a .onnx model needs the onnx "
                                  "extra: pip install 'tvmdev[onnx]'"]
    assert not (tmp_path / "o").exists()


def test_inputs_and_outputs_keep_order_and_names(cli: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    """The model's order (not sorted), tensor names as C identifiers."""
    nodes = [n("Add", ["z/in:0", "a in"], ["s"]), n("Relu", ["s"], ["out.b"]),
             n("Sigmoid", ["s"], ["out-a"])]
    model = tmp_path / "order.onnx"
    model.write_bytes(B.model(nodes, [B.tensor("z/in:0", [2, 3]), B.tensor("a in", [2, 3])],
                              [B.tensor("out.b", [2, 3]), B.tensor("out-a", [2, 3])]))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    assert r.out.splitlines()[-5:] == [
        "input z_in_0: [2, 3] float32", "input a_in: [2, 3] float32",
        "output out_b: [2, 3] float32", "output out_a: [2, 3] float32",
        "operators: Add x1, Relu x1, Sigmoid x1 -> add x1, relu x1, sigmoid x1"]


def test_corrupt_files_are_one_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Every truncation and 200 seeded corruptions: exit 1 with one tvmdev line, or (when
    the damage hits only weights) a model; never a traceback, never a file written."""
    src = B.mobilenet()
    cases = [src[:k] for k in range(0, len(src), 97)]
    for seed in range(200):
        rng = np.random.default_rng(seed)
        data = np.frombuffer(src, np.uint8).copy()
        hit = rng.random(len(data)) < 0.01
        data[hit] = rng.integers(0, 256, int(hit.sum()))
        cases.append(data.tobytes())
    model = tmp_path / "c.onnx"
    for data in cases:
        model.write_bytes(data)
        r = cli("import", str(model), "-o", str(tmp_path / "o"), "--dry-run")
        assert r.code in (0, 1), r.err
        if r.code:
            assert r.err.startswith(f"tvmdev: {model}: ") and "Traceback" not in r.err
        assert not (tmp_path / "o").exists()
