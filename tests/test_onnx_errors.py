"""Bad ONNX models: one line each (and a hint where there is one), exit 1, nothing
written; corrupt files never a traceback; the onnx extra missing; names and order of
inputs and outputs."""

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

n = helper.make_node


def _unsupported() -> bytes:
    nodes = [n("LeakyRelu", ["x"], ["a"], name="lr1"), n("Relu", ["a"], ["b"]),
             n("LeakyRelu", ["b"], ["c"], name="lr2"), n("Sin", ["c"], ["d"], name="sin"),
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


def _dynamic_quantized() -> bytes:
    nodes = [n("DynamicQuantizeLinear", ["x"], ["q", "s", "z"], name="dq"),
             n("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant")]
    return B.model(nodes, [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])])


def _elem_106(where: str) -> bytes:
    """x -> Relu -> a -> Relu -> y, with an element type ONNX does not define on ``where``:
    the output y or the value_info of a."""
    m = onnx.load_model_from_string(B.model(
        [n("Relu", ["x"], ["a"]), n("Relu", ["a"], ["y"])], [B.tensor("x", [1, 4])],
        [B.tensor("y", [1, 4])]))
    if where == "value_info":
        m.graph.value_info.append(B.tensor("a", [1, 4], 106))
    else:
        m.graph.output[0].type.tensor_type.elem_type = 106
    return bytes(m.SerializeToString())


def _folded(nodes: list[object], inits: list[object], opset: int = 13) -> bytes:
    """``nodes`` (shape arithmetic, folded at import) beside x -> Relu -> y."""
    return B.model([*nodes, n("Relu", ["x"], ["y"])], [B.tensor("x", [1, 4])],
                   [B.tensor("y", [1, 4])], inits, opset=opset)


def _declared(x: list[int], y: list[int | str], squeeze: bool = False) -> bytes:
    """x -> y by a Reshape to x's own shape or (``squeeze``) a Squeeze of its last dim,
    through shape arithmetic tvmdev folds and ONNX's shape inference (which propagates no
    values) cannot follow: y's declaration disagrees with what the operators compute,
    unseen by ONNX's checks."""
    nodes = [n("Shape", ["x"], ["s"])]
    if squeeze:
        nodes += [n("Shape", ["s"], ["r"]), n("Sub", ["r", "one"], ["a"]),
                  n("Squeeze", ["x", "a"], ["y"])]
    else:
        nodes += [n("Reshape", ["x", "s"], ["y"])]
    return B.model(nodes, [B.tensor("x", x)], [B.tensor("y", y)],
                   [B.init("one", np.array([1], np.int64))])


def _no_shape_output() -> bytes:
    y = onnx.ValueInfoProto()
    y.name = "y"
    y.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return B.model([n("Relu", ["x"], ["y"])], [B.tensor("x", [1, 4])], [y])


def _batch_norm(var: float) -> bytes:
    c = [B.init(k, np.full(2, v, np.float32))
         for k, v in (("s", 1.0), ("b", 0.0), ("m", 0.0), ("v", var))]
    return B.model([n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")],
                   [B.tensor("x", [1, 2, 3])], [B.tensor("y", [1, 2, 3])], c)


NEWEST = onnx.defs.onnx_opset_version()
OPSETS = f"tvmdev imports opsets 7 to {NEWEST} (the newest onnx {onnx.__version__} defines)"
TYPES = "tvmdev imports float32 models for now"
FLOAT32 = "export the model in float32 (its inputs, outputs and weights); int8 comes next"
MAX_FOLDED = "at most 16777216 are supported (a constant is compiled into the program)"
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
                    "4 unsupported operators: LeakyRelu x2 (first: node 0 'lr1'); Sin x1 "
                    "(first: node 3 'sin'); com.microsoft.FusedConv x1 (first: node 4 'fc')",
                    "tvmdev maps these ONNX operators: Abs, Add, AveragePool, "),
    "opset_old": ("t.onnx", lambda: B.relu(opset=6),
                  f"the model uses opset 6 of the default domain (ai.onnx); {OPSETS}",
                  "convert it: onnx.version_converter.convert_version(model, 17)"),
    "opset_new": ("t.onnx", lambda: B.relu(opset=NEWEST + 1),
                  f"the model uses opset {NEWEST + 1} of the default domain (ai.onnx); "
                  f"{OPSETS}", "convert it: "),
    "control_flow": ("t.onnx", _control_flow,
                     "the model has control flow (If x1 (first: node 0 'branch')); tvmdev "
                     "imports one graph without it", "export the model without control flow"),
    "quantized_uint8": ("t.onnx", _quantized,
                        "QuantizeLinear node 0 'quant': uint8 quantization (QUInt8); tvmdev's "
                        "quantized operators take int8 only",
                        "quantize with quantize_static(..., activation_type=QuantType.QInt8"),
    "quantized_dynamic": ("t.onnx", _dynamic_quantized,
                          "the model is dynamically quantized (DynamicQuantizeLinear x1 "
                          "(first: node 0 'dq')); tvmdev imports float32 and statically "
                          "quantized int8 models", "quantize it with "
                          "onnxruntime.quantization.quantize_static"),
    "int64_input": ("t.onnx", lambda: B.relu(B.tensor("x", [1, 4], 7), B.tensor("y", [1, 4], 7),
                                             opset=14),  # Relu of int64 came with opset 14
                    "input 'x' is int64 and is operand 0 of Relu (node 0 'relu'); tvmdev takes "
                    "int32 and int64 inputs only as the indices of a Gather (or read only by "
                    "Shape)", "a value the model needs at import (a shape, axes, pads) must "
                    "be an initializer"),
    "float16_input": ("t.onnx", lambda: B.relu(B.tensor("x", [1, 4], 10),
                                               B.tensor("y", [1, 4], 10)),
                      f"input 'x' is float16; {TYPES}", FLOAT32),
    "elem_type_output": ("t.onnx", lambda: _elem_106("output"),
                         "graph output 'y' has elem_type 106, which ONNX does not define (a "
                         "corrupt model)", None),
    "elem_type_value_info": ("t.onnx", lambda: _elem_106("value_info"),
                             "value_info 'a' has elem_type 106, which ONNX does not define "
                             "(a corrupt model)", None),
    "huge_constant_of_shape": ("t.onnx", lambda: _folded(
        [n("ConstantOfShape", ["s"], ["c"], name="cos")],
        [B.init("s", np.array([100000] * 3, np.int64))]),
        "node 0 'cos' ConstantOfShape: its value, computed at import, would have "
        f"1000000000000000 elements ([100000, 100000, 100000]); {MAX_FOLDED}", None),
    "huge_broadcast": ("t.onnx", lambda: _folded(
        [n("Mul", ["a", "b"], ["c"], name="outer")],
        [B.init("a", np.ones((5000, 1), np.int64)), B.init("b", np.ones((1, 5000), np.int64))]),
        "node 0 'outer' Mul: its value, computed at import, would have 25000000 elements "
        f"([5000, 5000]); {MAX_FOLDED}", None),
    "huge_concat": ("t.onnx", lambda: _folded(
        [n("Mul", ["a", "b"], ["c"], name="outer"),
         n("Concat", ["c"] * 3, ["cat"], name="cat", axis=0)],
        [B.init("a", np.ones((2048, 1), np.int8)), B.init("b", np.ones((1, 4096), np.int8))],
        opset=14),  # Mul of int8 came with opset 14
        f"node 1 'cat' Concat: its value, computed at import, would have 25165824 elements "
        f"([6144, 4096]); {MAX_FOLDED}", None),
    "huge_gather": ("t.onnx", lambda: _folded(
        [n("Gather", ["d", "i"], ["g"], name="g", axis=1)],
        [B.init("d", np.ones((4097, 1), np.int8)), B.init("i", np.zeros(4097, np.int64))]),
        f"node 0 'g' Gather: its value, computed at import, would have 16785409 elements "
        f"([4097, 4097]); {MAX_FOLDED}", None),
    "declared_output": ("t.onnx", lambda: _declared([1, 3], [1, 4]),
                        "output 'y' is declared [1, 4]; its operators compute [1, 3]",
                        "fix or drop the model's declaration"),
    "declared_output_rank": ("t.onnx", lambda: _declared([1, 3, 1], ["N", 3, 1], True),
                             "output 'y' is declared [N, 3, 1]; its operators compute [1, 3]",
                             "fix or drop the model's declaration"),
    "output_without_shape": ("t.onnx", _no_shape_output,
                             "invalid ONNX model: graph output 'y' has no shape (Field 'shape' "
                             "of 'type' is required but missing.)",
                             "declare it with onnx.helper.make_tensor_value_info"),
    "output_not_computed": ("t.onnx", lambda: B.model(
        [n("Relu", ["x"], ["y"])], [B.tensor("x", [1, 4])],
        [B.tensor("y", [1, 4]), B.tensor("x", [1, 4])]),
        "output 'x' is not computed by any operator (it is a graph input)",
        "tvmdev compiles what operators compute: drop it from the graph's outputs"),
    "batch_norm_var_negative": ("t.onnx", lambda: _batch_norm(-1.0),
                                "BatchNormalization node 0 'bn': var + epsilon is negative "
                                "(-0.99999 at channel 0); scale / sqrt(var + epsilon) has no "
                                "finite value", "a variance is never negative"),
    "batch_norm_var_nan": ("t.onnx", lambda: _batch_norm(float("nan")),
                           "BatchNormalization node 0 'bn': var has values that are not finite "
                           "(NaN or infinity)", None),
    "conv_group": ("t.onnx", lambda: B.model(
        [n("Conv", ["x", "w"], ["y"], name="c", group=3)], [B.tensor("x", [1, 3, 4, 4])],
        [B.tensor("y", [1, 4, 4, 4])], [B.init("w", np.ones((4, 1, 1, 1), np.float32))]),
        "Conv writing 'y': group 3 must divide the input channels 3 and the output channels 4",
        "Conv's operands and attributes: https://onnx.ai/onnx/operators/onnx__Conv.html"),
    "reduce_mean_same_dim": ("t.onnx", lambda: B.model(
        [n("ReduceMean", ["x"], ["y"], axes=[1, -2])], [B.tensor("x", [2, 3, 4])],
        [B.tensor("y", [2, 1, 4])]),
        "ReduceMean writing 'y': mean: axes [1, -2] repeat a dim (1 and -2 are both dim 1 of "
        "a 3-D input)", "ReduceMean's operands and attributes: "),
    "conv3d": ("t.onnx", lambda: B.model(
        [n("Conv", ["x", "w"], ["y"], name="c3")], [B.tensor("x", [1, 2, 3, 4, 4])],
        [B.tensor("y", [1, 1, 2, 3, 3])], [B.init("w", np.ones((1, 2, 2, 2, 2), np.float32))]),
        "1 unsupported operator: Conv (3-D) x1 (first: node 0 'c3')", "tvmdev maps "),
    "conv_same_stride": ("t.onnx", lambda: B.model(
        [n("Conv", ["x", "w"], ["y"], name="c", strides=[4, 4], auto_pad="SAME_UPPER")],
        [B.tensor("x", [1, 3, 8, 8])], [B.tensor("y", [1, 2, 2, 2])],
        [B.init("w", np.ones((2, 3, 1, 1), np.float32))]),
        "1 unsupported operator: Conv (auto_pad SAME_UPPER with a stride larger than the "
        "window) x1 (first: node 0 'c')", "tvmdev maps "),
    "pool_same_stride": ("t.onnx", lambda: B.model(
        [n("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[1], strides=[3],
           auto_pad="SAME_UPPER")], [B.tensor("x", [1, 2, 6])], [B.tensor("y", [1, 2, 2])]),
        "1 unsupported operator: MaxPool (auto_pad SAME_UPPER with a stride larger than the "
        "window) x1 (first: node 0 'mp')", "tvmdev maps "),
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


def test_input_shape_sets_dynamic_dims_only(cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    """--input-shape keeps the declared rank and static dims; it sizes the dynamic ones."""
    model = tmp_path / "dyn.onnx"
    model.write_bytes(B.relu(B.tensor("x:0", ["N", 3, 4]), B.tensor("y", ["N", 3, 4])))
    for given, fixed in (("2,5,4", "2,3,4"), ("2,3", "1,3,4"), ("2,3,4,1", "1,3,4")):
        r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape",
                f"x:0={given}")
        assert r.code == 1
        assert r.err.splitlines() == [
            f"tvmdev: {model}: --input-shape x:0={given}: input 'x:0' is declared [N, 3, 4]; "
            "the option sets its dynamic dims only", f"  hint: fix it: --input-shape x_0={fixed}"]
        assert not (tmp_path / "o").exists()


def test_checker_message_is_whole(cli: Callable[..., Result], tmp_path: Path) -> None:
    """onnx.checker's first sentence spans lines (it quotes the node): kept whole, on one."""
    model = tmp_path / "order.onnx"
    model.write_bytes(B.model([n("Relu", ["a"], ["y"], name="second"),
                               n("Relu", ["x"], ["a"], name="first")],
                              [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])]))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1
    [line] = r.err.splitlines()
    assert line.startswith(f"tvmdev: {model}: invalid ONNX model: ")
    assert "input 'a' of node: name: second OpType: Relu is not output of any previous " \
           "nodes." in line, line


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


@pytest.mark.slow
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


def test_ceil_mode_declaration_is_a_note(cli: Callable[..., Result], tmp_path: Path) -> None:
    """onnx's shape inference keeps a ceil_mode pool's last window where it starts in the
    padding; ONNX Runtime drops it, warns and runs. So does tvmdev: a note, not an error,
    and the output has ONNX Runtime's shape. Any other disagreement is still an error."""
    import onnx
    from onnx import helper
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2], strides=[2],
                            pads=[1, 1], ceil_mode=1)
    declared = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(B.model(
        [node], [B.tensor("x", [1, 1, 3])], [B.tensor("y", None)])))
    dims = [d.dim_value for d in declared.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [1, 1, 3]  # what onnx says; ONNX Runtime computes [1, 1, 2]
    path = tmp_path / "ceil.onnx"
    path.write_bytes(declared.SerializeToString())
    r = cli("import", str(path), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    assert r.err.startswith(f"note: {path}: output 'y' is declared [1, 1, 3]; its operators "
                            "compute [1, 1, 2], as ONNX Runtime computes it")
    assert "output y: [1, 1, 2] float32" in r.out
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    got = ort.InferenceSession(str(path), so).run(None, {"x": np.zeros((1, 1, 3), np.float32)})
    assert got[0].shape == (1, 1, 2)
    declared.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 4  # plainly wrong
    path.write_bytes(declared.SerializeToString())
    r = cli("import", str(path), "-o", str(tmp_path / "o2"))  # ONNX's strict checks see it
    assert r.code == 1 and r.err.startswith(f"tvmdev: {path}: invalid ONNX model: ")
