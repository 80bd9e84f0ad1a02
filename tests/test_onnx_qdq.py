"""ONNX models quantized by onnxruntime's ``quantize_static`` (int8 activations and
weights, per tensor and per channel; QDQ, and QOperator: QLinearConv, QLinearMatMul,
QGemm, com.microsoft's QLinear ops) lowered to tvmdev's int8 operators and compared with
ONNX Runtime (one thread, the model as written).

Each requantizing operator, fed ONNX Runtime's own int8 operands, lands within one step
of ONNX Runtime's output (ORT requantizes the float32 value once, ties to even; TFLM's
kernels the exact integer sum through a fixed-point multiplier, rounding twice, ties away
from zero: about 0.5% of a conv's outputs round the other way). End to end, those steps
carry through the layers after them: the bound is ``onnx_qdq_models.bound`` (each layer's
step times the gains of the layers after it), and what these models show is 2 steps.

Fast: what the import makes (int8 ops, NHWC inside, bias int32 at input_scale *
weight_scale, depthwise, fused Relu/Clip), refusals, and tvmdev's numpy reference of the
int8 model against ORT, layer by layer and end to end. Slow: ``tvmdev run`` on the host:
its C outputs are the numpy reference's, bit for bit.

The models (tests/onnx_qdq_models.py): ``mlp`` (Gemm, Relu, Gemm, MatMul), ``convnet``
(Conv, Relu, Conv, Relu, Flatten, Gemm) and ``dwnet`` (Conv, depthwise Conv, Clip,
Flatten, MatMul) need only the int8 ops on main; ``cnn`` (Conv, Relu, MaxPool, Add,
AveragePool, Gemm...) and ``zoo`` (Sigmoid, Mul, Concat, Pad, Tanh in float,
GlobalAveragePool, Softmax...) need the int8 add, pools, softmax, sigmoid, pad, mean and
concat too; ``smooth`` (Sigmoid and Tanh calibrated to steps finer than TFLM's fixed
output quantization) runs them in float32.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_module

need_module("onnx", "pip install -e '.[test]'")
need_module("onnxruntime", "pip install -e '.[test]'")
import onnx  # noqa: E402
import onnx_build as B  # noqa: E402
from onnx_qdq_models import (  # noqa: E402
    MODELS,
    ONE_STEP,
    _Reader,
    bound,
    inputs,
    layer_steps,
    mlp,
    ort_layers,
    quantize,
    steps,
)
from onnxruntime import quantization as oq  # noqa: E402

from tvmdev.frontends.importer import import_file  # noqa: E402
from tvmdev.load.export import description  # noqa: E402
from tvmdev.model import reference  # noqa: E402
from tvmdev.model.graph import Model  # noqa: E402

n = onnx.helper.make_node
Case = tuple[str, bool, str]  # model, per channel, format
CASES: list[Case] = [(m, pc, "QDQ") for m in MODELS for pc in (False, True)] + [
    (m, True, "QOperator") for m in MODELS]


def _id(case: Case) -> str:
    return f"{case[0]}-{'channel' if case[1] else 'tensor'}-{case[2]}"


@pytest.fixture(scope="module")
def qmodels(tmp_path_factory: pytest.TempPathFactory) -> dict[Case, tuple[Path, Any]]:
    tmp = tmp_path_factory.mktemp("qdq")
    return {c: quantize(tmp, MODELS[c[0]], c[1],
                        quant_format=getattr(oq.QuantFormat, c[2])) for c in CASES}


def _described(path: Path) -> tuple[dict[str, Any], Model]:
    """The imported model and its description (what ``tvmdev import`` writes)."""
    model = import_file(path).to_model()
    return description(model), model


def _ops(path: Path) -> list[dict[str, Any]]:
    return list(_described(path)[0]["operators"])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_reference_each_layer_within_one_step(qmodels: dict[Case, Any], case: Case) -> None:
    """tvmdev's numpy reference of the int8 model (the integer arithmetic the kernels do)
    against ONNX Runtime on the quantized model: each int8 operator fed ONNX Runtime's
    operands within one step of its output; the model's output within the bound the
    layers' gains give (read from the QDQ form of the same quantization)."""
    path, shape = qmodels[case]
    model = import_file(path).to_model()
    for seed in (3, 4):
        x = inputs(shape, seed)
        layers = layer_steps(path, model, x)
        assert len(layers) >= 3 and max(layers.values()) <= 1, layers
        got = reference.evaluate(model, {"x": x})[next(iter(model.outputs))]
        assert steps(path, got, x) <= bound(qmodels[(case[0], case[1], "QDQ")][0])


def test_smooth_activations_finer_than_tflm_in_float(qmodels: dict[Case, Any]) -> None:
    """A Sigmoid calibrated to a step finer than TFLM's fixed 1/256 runs in float32
    between a dequantize and a quantize, as the model says: TFLM's int8 sigmoid and a
    requantization from 1/256 rounded 38% of its outputs otherwise than ONNX Runtime."""
    path, shape = qmodels[("smooth", False, "QDQ")]
    doc, model = _described(path)
    ops = [o["op"] for o in doc["operators"]]
    assert ops[2:6] == ["conv2d", "dequantize", "sigmoid", "quantize"], ops
    sig = doc["operators"][4]["outputs"][0]
    assert "dtype" not in doc.get("tensors", {}).get(sig, {})  # float32
    differ = total = 0
    for seed in range(4):
        x = inputs(shape, seed)
        want = ort_layers(path, x)["s_QuantizeLinear_Output"].transpose(0, 2, 3, 1)
        forced = {"c1_QuantizeLinear_Output": ort_layers(path, x)["c1_QuantizeLinear_Output"]
                  .transpose(0, 2, 3, 1)}
        one = dataclasses.replace(model, operators=tuple(model.operators[3:6]))
        got = reference.evaluate(one, forced)["s_QuantizeLinear_Output"]
        differ, total = differ + int(np.sum(got != want)), total + got.size
    assert differ <= total // 100, (differ, total)


def test_cnn_and_zoo_mapped(qmodels: dict[Case, Any]) -> None:
    """The CNN's Add and pools and the zoo's ops map onto the int8 ops of the same name;
    the zoo's Tanh (and the AveragePool after it), which quantize_static leaves in float,
    run in float32 between a dequantize and a quantize; its Softmax is written at TFLM's
    1/256 and requantized to ORT's 1/255."""
    cnn = [o["op"] for o in _ops(qmodels[("cnn", True, "QDQ")][0])]
    assert cnn == ["transpose", "quantize", "conv2d", "conv2d", "maxpool2d", "conv2d", "add",
                   "avgpool2d", "reshape", "fully_connected", "dequantize"]
    doc, _ = _described(qmodels[("zoo", True, "QDQ")][0])
    ops = [o["op"] for o in doc["operators"]]
    assert ops == ["transpose", "quantize", "conv2d", "depthwise_conv2d", "sigmoid",
                   "quantize", "mul", "quantize", "concat", "pad", "conv2d", "dequantize",
                   "transpose", "tanh", "avgpool2d", "transpose", "quantize", "mean",
                   "reshape", "fully_connected", "softmax", "quantize", "dequantize"]
    tanh = doc["operators"][13]["outputs"][0]
    assert "dtype" not in doc.get("tensors", {}).get(tanh, {})  # float32
    soft = doc["operators"][20]["outputs"][0]
    assert doc["tensors"][soft]["quant"] == {"scale": [1 / 256], "zero_point": [-128]}
    qop = [o["op"] for o in _ops(qmodels[("zoo", True, "QOperator")][0])]
    assert "concat" in qop and "mean" in qop and "softmax" in qop


@pytest.mark.parametrize("per_channel", [False, True])
def test_convnet_import_nhwc(qmodels: dict[Case, Any], per_channel: bool) -> None:
    """Transposed to NHWC before the quantize and nowhere else; conv2d NHWC with OHWI
    weights; the bias int32 at input_scale * weight_scale; the flatten a reshape feeding
    fully_connected, its weight columns in HWC order."""
    path, _ = qmodels[("convnet", per_channel, "QDQ")]
    doc, model = _described(path)
    ops = doc["operators"]
    assert [o["op"] for o in ops] == ["transpose", "quantize", "conv2d", "conv2d", "reshape",
                                      "fully_connected", "dequantize"]
    assert ops[0]["attrs"] == {"perm": [0, 2, 3, 1]}
    assert all(o["attrs"]["layout"] == "NHWC" for o in ops if o["op"] == "conv2d")
    m = onnx.load(str(path))
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    conv = ops[2]
    w = model.constants[conv["inputs"][1]]
    assert w.dtype == np.int8 and w.shape == (4, 3, 3, 3)
    assert np.array_equal(w, inits["w1_quantized"].transpose(0, 2, 3, 1))
    bias = doc["constants"][conv["inputs"][2]]
    assert bias["dtype"] == "int32"
    s_in = float(inits["x_scale"])
    s_w = np.atleast_1d(inits["w1_scale"]).astype(np.float64)
    assert np.allclose(bias["quant"]["scale"], s_in * np.broadcast_to(s_w, (4,)), rtol=1e-6)
    assert np.array_equal(model.constants[conv["inputs"][2]], inits["b1_quantized"])
    fc_w = model.constants[ops[5]["inputs"][1]]
    want = inits["w3_quantized"].reshape(10, 6, 4, 4).transpose(0, 2, 3, 1).reshape(10, 96)
    assert np.array_equal(fc_w, want)
    assert doc["inputs"]["x"] == {"shape": [1, 3, 8, 8], "dtype": "float32"}
    assert doc["outputs"]["y"]["dtype"] == "float32"
    assert doc["tensors"][ops[1]["outputs"][0]]["dtype"] == "int8"


def test_mlp_import(qmodels: dict[Case, Any]) -> None:
    """Gemm and MatMul by constants are fully_connected [N, K]; no transposes in 2-D; the
    Relus fused (removed by the quantizer, or folded into the activation)."""
    path, _ = qmodels[("mlp", True, "QDQ")]
    ops = _ops(path)
    assert [o["op"] for o in ops] == ["quantize", "fully_connected", "fully_connected",
                                      "fully_connected", "dequantize"]


def test_dwnet_import(qmodels: dict[Case, Any]) -> None:
    """A Conv whose groups are one input channel each is depthwise_conv2d, its weights
    [1, KH, KW, C * multiplier] quantized per channel along axis 3."""
    path, _ = qmodels[("dwnet", True, "QDQ")]
    doc, _ = _described(path)
    ops = doc["operators"]
    assert [o["op"] for o in ops] == ["transpose", "quantize", "conv2d", "depthwise_conv2d",
                                      "reshape", "fully_connected", "dequantize"]
    assert ops[3]["attrs"]["depth_multiplier"] == 2
    w = doc["constants"][ops[3]["inputs"][1]]
    assert w["shape"] == [1, 3, 3, 8] and w["quant"]["axis"] == 3


def _qdq_relu(s1: float, z1: int, s2: float, z2: int, act: str, float_bias: bool = False
              ) -> bytes:
    """By hand: x -> Q/DQ -> Conv (DQ weights, DQ bias) -> Q(s1, z1) -> DQ -> Relu or Clip
    -> Q(s2, z2) -> DQ -> y: the activation fused into the int8 conv2d (at s1, z1), then a
    requantization to (s2, z2)."""
    rng = np.random.default_rng(5)
    w = rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8)
    sx, sw = 0.02, 0.004
    inits = [B.init("sx", np.float32(sx)), B.init("zx", np.int8(3)), B.init("w", w),
             B.init("sw", np.float32(sw)), B.init("zw", np.int8(0)),
             B.init("b", rng.integers(-2000, 2000, 4).astype(np.int32)),
             B.init("sb", np.float32(np.float32(sx) * np.float32(sw))),
             B.init("zb", np.int32(0)), B.init("s1", np.float32(s1)),
             B.init("z1", np.int8(z1)), B.init("s2", np.float32(s2)), B.init("z2", np.int8(z2)),
             B.init("lo", np.float32(0)), B.init("hi", np.float32(6))]
    if float_bias:  # left unquantized: the real values
        bias = onnx.numpy_helper.to_array(inits[5]).astype(np.float32)
        inits.append(B.init("bf", bias * np.float32(sx * sw) + np.float32(1e-3)))
    relu = (n("Relu", ["d1"], ["r"]) if act == "Relu"
            else n("Clip", ["d1", "lo", "hi"], ["r"]))
    nodes = [n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]),
             n("DequantizeLinear", ["qx", "sx", "zx"], ["dx"]),
             n("DequantizeLinear", ["w", "sw", "zw"], ["dw"]),
             n("DequantizeLinear", ["b", "sb", "zb"], ["db"]),
             n("Conv", ["dx", "dw", "bf" if float_bias else "db"], ["c"], pads=[1, 1, 1, 1]),
             n("QuantizeLinear", ["c", "s1", "z1"], ["q1"]),
             n("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]), relu,
             n("QuantizeLinear", ["r", "s2", "z2"], ["q2"]),
             n("DequantizeLinear", ["q2", "s2", "z2"], ["y"])]
    return B.model(nodes, [B.tensor("x", [1, 2, 5, 5])], [B.tensor("y", [1, 4, 5, 5])], inits)


@pytest.mark.parametrize(("act", "s2", "z2", "ops"), [
    ("Relu", 0.05, 0, ["conv2d"]), ("Relu", 0.02, -128, ["conv2d", "quantize"]),
    ("Clip", 0.03, -100, ["conv2d", "quantize"])])
def test_relu_between_qdq_fused(act: str, s2: float, z2: int, ops: list[str],
                                tmp_path: Path) -> None:
    """A Relu or Clip 0..6 between DQ and Q after a conv: the conv's activation, then a
    requantization when the second Q differs; within one step of ONNX Runtime."""
    path = tmp_path / "relu.onnx"
    path.write_bytes(_qdq_relu(0.05, 0, s2, z2, act))
    doc, model = _described(path)
    got_ops = [o["op"] for o in doc["operators"]]
    assert got_ops == ["transpose", "quantize", *ops, "dequantize", "transpose"]
    conv = doc["operators"][2]
    assert conv["attrs"]["activation"] == ("RELU" if act == "Relu" else "RELU6")
    for seed in (1, 2):
        x = (np.random.default_rng(seed).standard_normal((1, 2, 5, 5)) * 2).astype(np.float32)
        got = reference.evaluate(model, {"x": x})["y"]
        assert steps(path, got, x) <= ONE_STEP


def test_float_bias_quantized(tmp_path: Path) -> None:
    """A Conv bias left in float32 is quantized at input_scale * weight_scale (int32)."""
    path = tmp_path / "fbias.onnx"
    path.write_bytes(_qdq_relu(0.05, 0, 0.05, 0, "Relu", float_bias=True))
    doc, model = _described(path)
    conv = doc["operators"][2]
    assert conv["op"] == "conv2d" and doc["constants"][conv["inputs"][2]]["dtype"] == "int32"
    x = (np.random.default_rng(1).standard_normal((1, 2, 5, 5)) * 2).astype(np.float32)
    assert steps(path, reference.evaluate(model, {"x": x})["y"], x) <= ONE_STEP


def test_refusals_one_line(tmp_path: Path, cli: Callable[..., Result]) -> None:
    """uint8 (QUInt8) models and asymmetric weights are refused in one line and a hint,
    nothing written."""
    raw, shape = mlp(np.random.default_rng(0))
    fp = tmp_path / "f.onnx"
    fp.write_bytes(raw)
    cases = {"u8": ({"activation_type": oq.QuantType.QUInt8,
                     "weight_type": oq.QuantType.QUInt8},
                    "uint8 quantization (QUInt8); tvmdev's quantized operators take int8 only",
                    "quantize with quantize_static(..., activation_type=QuantType.QInt8"),
             "asym": ({"activation_type": oq.QuantType.QInt8,
                       "weight_type": oq.QuantType.QInt8,
                       "extra_options": {"WeightSymmetric": False}},
                      "are asymmetric (zero point", "quantize the weights symmetrically")}
    for name, (opts, message, hint) in cases.items():
        qp = tmp_path / f"{name}.onnx"
        oq.quantize_static(str(fp), str(qp), _Reader(shape, 1),
                           quant_format=oq.QuantFormat.QDQ, **opts)
        r = cli("import", str(qp), "-o", str(tmp_path / "o"))
        lines = r.err.splitlines()
        assert r.code == 1 and len(lines) == 2, r.err
        assert lines[0].startswith(f"tvmdev: {qp}: ") and message in lines[0], lines
        assert lines[1].startswith(f"  hint: {hint}"), lines
        assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c[2] == "QDQ"] + [
    ("zoo", True, "QOperator"), ("convnet", True, "QOperator")], ids=_id)
def test_run_host_is_the_reference(qmodels: dict[Case, Any], case: Case,
                                   cli: Callable[..., Result], tmp_path: Path) -> None:
    """``tvmdev run`` on the host (the C kernels): its outputs are the numpy reference's
    bit for bit (the reference is checked against ONNX Runtime above), and within the
    bound of ONNX Runtime's."""
    path, shape = qmodels[case]
    x = inputs(shape, 11)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", x)
    r = cli("run", str(path), "--board", "host", "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    got = np.load(tmp_path / "out" / "y.npy")
    model = import_file(path).to_model()
    assert np.array_equal(got, reference.evaluate(model, {"x": x})["y"])
    assert steps(path, got, x) <= bound(qmodels[(case[0], case[1], "QDQ")][0])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_seeded_models_within_the_bound(name: str, tmp_path: Path) -> None:
    """Each model quantized from four weight seeds, per tensor and per channel (QDQ) and
    per channel (QOperator), on three inputs each: every layer within one step of ONNX
    Runtime, the output within the bound (these show at most 2 steps)."""
    worst = 0.0
    for weights in range(4):
        for per_channel, fmt in ((False, "QDQ"), (True, "QDQ"), (True, "QOperator")):
            path, shape = quantize(tmp_path, MODELS[name], per_channel, seed=weights,
                                   quant_format=getattr(oq.QuantFormat, fmt))
            limit = bound(quantize(tmp_path, MODELS[name], per_channel, seed=weights)[0])
            model = import_file(path).to_model()
            for seed in range(3):
                x = inputs(shape, 20 + seed)
                assert max(layer_steps(path, model, x).values()) <= 1
                got = reference.evaluate(model, {"x": x})["y"]
                worst = max(worst, steps(path, got, x))
                assert steps(path, got, x) <= limit
    print(f"\n{name}: at most {worst:.0f} steps from ONNX Runtime")
