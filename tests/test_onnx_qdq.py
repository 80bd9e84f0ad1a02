"""ONNX QDQ models, as onnxruntime's ``quantize_static`` writes them (int8 activations and
weights, per tensor and per channel), lowered to tvmdev's int8 operators and compared with
ONNX Runtime (one thread): every output element within one quantization step (ORT
requantizes in float, TFLM's kernels in fixed point, so they round differently).

Fast: what the import makes (int8 ops, NHWC inside, bias int32 at input_scale *
weight_scale), refusals, and tvmdev's numpy reference of the int8 model against ORT.
Slow: ``tvmdev run`` on the host against ORT.

The models: ``mlp`` (Gemm, Relu, Gemm, MatMul) and ``convnet`` (Conv, Relu, Conv, Relu,
Flatten, Gemm) need only the int8 ops on main; ``cnn`` (Conv, Relu, Conv, Relu,
MaxPool, Conv, Add, Relu, AveragePool, Flatten, Gemm) needs the int8 add and pools too
(NEEDS_POOLS: checked when the op table has them, else its import is shown refused at
model check naming the missing int8 op).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import IN_CI, Result

from tvmdev.errors import TvmdevError

try:
    import onnx
    import onnxruntime as ort
    from onnxruntime import quantization as oq
except ImportError:
    if IN_CI:
        raise AssertionError("onnx or onnxruntime is missing (CI installs .[test])") from None
    pytest.skip("onnx and onnxruntime are not installed: pip install -e '.[test]'",
                allow_module_level=True)

import onnx_build as B  # noqa: E402

from tvmdev.frontends.importer import import_file  # noqa: E402
from tvmdev.model import reference  # noqa: E402
from tvmdev.model.s8.table import S8OPS  # noqa: E402

n = onnx.helper.make_node
NEEDS_POOLS = ("add", "maxpool2d", "avgpool2d")
ONE_STEP = 1 + 1e-4  # one quantization step, measured in float32


def _w(rng: np.random.Generator, name: str, shape: tuple[int, ...], scale: float = 0.3) -> Any:
    return B.init(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def mlp(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Gemm (transB), Relu, Gemm (not transposed), Relu, MatMul by constants."""
    inits = [_w(rng, "w1", (24, 16)), _w(rng, "b1", (24,), 0.1), _w(rng, "w2", (24, 12)),
             _w(rng, "b2", (12,), 0.1), _w(rng, "w3", (12, 5))]
    nodes = [n("Gemm", ["x", "w1", "b1"], ["g1"], transB=1), n("Relu", ["g1"], ["r1"]),
             n("Gemm", ["r1", "w2", "b2"], ["g2"]), n("Relu", ["g2"], ["r2"]),
             n("MatMul", ["r2", "w3"], ["y"])]
    return B.model(nodes, [B.tensor("x", [2, 16])], [B.tensor("y", [2, 5])], inits), (2, 16)


def convnet(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Conv, Relu, Conv (stride 2), Relu, Flatten (an NHWC tensor), Gemm."""
    inits = [_w(rng, "w1", (4, 3, 3, 3)), _w(rng, "b1", (4,), 0.1),
             _w(rng, "w2", (6, 4, 3, 3)), _w(rng, "b2", (6,), 0.1),
             _w(rng, "w3", (10, 6 * 4 * 4), 0.1), _w(rng, "b3", (10,), 0.1)]
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             n("Relu", ["c2"], ["r2"]), n("Flatten", ["r2"], ["f"]),
             n("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    return (B.model(nodes, [B.tensor("x", [1, 3, 8, 8])], [B.tensor("y", [1, 10])], inits),
            (1, 3, 8, 8))


def dwnet(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Conv, Relu, a depthwise Conv (group = channels, multiplier 2, stride 2), Clip 0..6,
    Flatten, MatMul."""
    inits = [_w(rng, "w1", (4, 3, 3, 3)), _w(rng, "b1", (4,), 0.1),
             _w(rng, "w2", (8, 1, 3, 3), 0.5), _w(rng, "b2", (8,), 0.1),
             _w(rng, "w3", (8 * 3 * 3, 6), 0.1), B.init("lo", np.float32(0)),
             B.init("hi", np.float32(6))]
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "w2", "b2"], ["c2"], group=4, pads=[1, 1, 1, 1],
               strides=[2, 2]),
             n("Clip", ["c2", "lo", "hi"], ["r2"]), n("Flatten", ["r2"], ["f"]),
             n("MatMul", ["f", "w3"], ["y"])]
    return (B.model(nodes, [B.tensor("x", [1, 3, 6, 6])], [B.tensor("y", [1, 6])], inits),
            (1, 3, 6, 6))


def cnn(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Conv, Relu, Conv, Relu, MaxPool, Conv, Add (a residual), Relu, AveragePool,
    Flatten, Gemm."""
    inits = [_w(rng, "w1", (8, 3, 3, 3)), _w(rng, "b1", (8,), 0.1),
             _w(rng, "w2", (8, 8, 3, 3), 0.2), _w(rng, "b2", (8,), 0.1),
             _w(rng, "w3", (8, 8, 1, 1), 0.3), _w(rng, "b3", (8,), 0.1),
             _w(rng, "w4", (10, 8 * 2 * 2), 0.2), _w(rng, "b4", (10,), 0.1)]
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), n("Relu", ["c2"], ["r2"]),
             n("MaxPool", ["r2"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Conv", ["p1", "w3", "b3"], ["c3"]), n("Add", ["c3", "p1"], ["s"]),
             n("Relu", ["s"], ["r3"]),
             n("AveragePool", ["r3"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Flatten", ["p2"], ["f"]), n("Gemm", ["f", "w4", "b4"], ["y"], transB=1)]
    return (B.model(nodes, [B.tensor("x", [1, 3, 8, 8])], [B.tensor("y", [1, 10])], inits),
            (1, 3, 8, 8))


class _Reader(oq.CalibrationDataReader):  # type: ignore[misc]
    """Seeded calibration batches."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.batches = iter([{"x": rng.standard_normal(shape).astype(np.float32)}
                             for _ in range(16)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def quantize(tmp: Path, build: Callable[[np.random.Generator], tuple[bytes, tuple[int, ...]]],
             per_channel: bool, seed: int = 0, **kw: Any) -> tuple[Path, tuple[int, ...]]:
    """The float model built by ``build``, quantized by quantize_static (QDQ, int8)."""
    raw, shape = build(np.random.default_rng(seed))
    fp, qp = tmp / f"{build.__name__}_float.onnx", tmp / f"{build.__name__}_{per_channel}.onnx"
    fp.write_bytes(raw)
    opts = {"activation_type": oq.QuantType.QInt8, "weight_type": oq.QuantType.QInt8,
            "quant_format": oq.QuantFormat.QDQ, **kw}
    oq.quantize_static(str(fp), str(qp), _Reader(shape, seed + 1), per_channel=per_channel,
                       **opts)
    return qp, shape


def ort_run(path: Path, x: np.ndarray, level: str = "ORT_ENABLE_BASIC") -> np.ndarray:
    """ONNX Runtime's output, one thread. At the basic optimization level it runs the QDQ
    model as written (DequantizeLinear, the float op, QuantizeLinear: the model's meaning);
    the extended levels fuse them into its x86 u8s8 kernels, whose int16 pair sums
    saturate on CPUs without VNNI (ORT's docs on reduce_range): many steps off there."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return np.asarray(s.run(None, {"x": x})[0])


def output_scale(path: Path) -> float:
    """The scale of the DequantizeLinear writing the model's output."""
    m = onnx.load(str(path))
    out = m.graph.output[0].name
    dq = next(node for node in m.graph.node if out in node.output)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    return float(inits[dq.input[1]])


def steps(path: Path, got: np.ndarray, x: np.ndarray) -> float:
    """The largest difference from ONNX Runtime's output, in quantization steps."""
    want = ort_run(path, x)
    assert got.shape == want.shape
    return float(np.max(np.abs(got.astype(np.float64) - want)) / output_scale(path))


def inputs(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Seeded inputs a little wider than the calibration's."""
    return (np.random.default_rng(seed).standard_normal(shape) * 1.2).astype(np.float32)


MODELS = {"mlp": mlp, "convnet": convnet, "dwnet": dwnet, "cnn": cnn}
CASES = [(m, pc) for m in MODELS for pc in (False, True)]


def _id(case: tuple[str, bool]) -> str:
    return f"{case[0]}-{'channel' if case[1] else 'tensor'}"


def _has_pools() -> bool:
    return all(op in S8OPS for op in NEEDS_POOLS)


@pytest.fixture(scope="module")
def qmodels(tmp_path_factory: pytest.TempPathFactory
            ) -> dict[tuple[str, bool], tuple[Path, tuple[int, ...]]]:
    tmp = tmp_path_factory.mktemp("qdq")
    return {(m, pc): quantize(tmp, MODELS[m], pc) for m, pc in CASES}


def _ops(path: Path) -> list[dict[str, Any]]:
    return list(import_file(path).doc["operators"])


@pytest.mark.parametrize("per_channel", [False, True])
def test_convnet_import_nhwc(qmodels: dict[Any, Any], per_channel: bool) -> None:
    """Transposed to NHWC before the quantize and nowhere else; conv2d NHWC with OHWI
    weights; the bias int32 at input_scale * weight_scale; the flatten a reshape feeding
    fully_connected, its weight columns in HWC order."""
    path, _ = qmodels[("convnet", per_channel)]
    imported = import_file(path)
    doc, ops = imported.doc, imported.doc["operators"]
    assert [o["op"] for o in ops] == ["transpose", "quantize", "conv2d", "conv2d", "reshape",
                                      "fully_connected", "dequantize"]
    assert ops[0]["attrs"] == {"perm": [0, 2, 3, 1]}
    assert all(o["attrs"]["layout"] == "NHWC" for o in ops if o["op"] == "conv2d")
    m = onnx.load(str(path))
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    conv = ops[2]
    w = imported.arrays[doc["constants"][conv["inputs"][1]]["npy"]]
    assert w.dtype == np.int8 and w.shape == (4, 3, 3, 3)
    assert np.array_equal(w, inits["w1_quantized"].transpose(0, 2, 3, 1))
    bias = doc["constants"][conv["inputs"][2]]
    assert bias["dtype"] == "int32"
    s_in = float(inits["x_scale"])
    s_w = np.atleast_1d(inits["w1_scale"]).astype(np.float64)
    assert np.allclose(bias["quant"]["scale"], s_in * np.broadcast_to(s_w, (4,)), rtol=1e-6)
    assert np.array_equal(imported.arrays[bias["npy"]], inits["b1_quantized"])
    fc_w = imported.arrays[doc["constants"][ops[5]["inputs"][1]]["npy"]]
    want = inits["w3_quantized"].reshape(10, 6, 4, 4).transpose(0, 2, 3, 1).reshape(10, 96)
    assert np.array_equal(fc_w, want)
    assert doc["inputs"]["x"] == {"shape": [1, 3, 8, 8], "dtype": "float32"}
    assert doc["outputs"]["y"]["dtype"] == "float32"
    assert doc["tensors"][ops[1]["outputs"][0]]["dtype"] == "int8"


def test_mlp_import(qmodels: dict[Any, Any]) -> None:
    """Gemm and MatMul by constants are fully_connected [N, K]; no transposes in 2-D; the
    Relus fused (removed by the quantizer, or folded into the activation)."""
    path, _ = qmodels[("mlp", True)]
    ops = _ops(path)
    assert [o["op"] for o in ops] == ["quantize", "fully_connected", "fully_connected",
                                      "fully_connected", "dequantize"]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "cnn"], ids=_id)
def test_reference_within_one_step(qmodels: dict[Any, Any], case: tuple[str, bool]) -> None:
    """tvmdev's numpy reference of the int8 model (the integer arithmetic the kernels do)
    against ONNX Runtime on the QDQ model: every element within one step."""
    path, shape = qmodels[case]
    model = import_file(path).to_model()
    for seed in (3, 4):
        x = inputs(shape, seed)
        got = reference.evaluate(model, {"x": x})[next(iter(model.outputs))]
        assert steps(path, got, x) <= ONE_STEP


def test_cnn_needs_int8_pools(qmodels: dict[Any, Any]) -> None:
    """The CNN maps Add, MaxPool and AveragePool onto the int8 add and pools: within one
    step when the op table has them, else refused at model check naming one."""
    path, shape = qmodels[("cnn", True)]
    imported = import_file(path)
    assert [o["op"] for o in imported.doc["operators"]] == [
        "transpose", "quantize", "conv2d", "conv2d", "maxpool2d", "conv2d", "add",
        "avgpool2d", "reshape", "fully_connected", "dequantize"]
    if not _has_pools():
        with pytest.raises(TvmdevError, match="has no int8 form yet"):
            imported.to_model()
        return
    model = imported.to_model()
    x = inputs(shape, 3)
    got = reference.evaluate(model, {"x": x})[next(iter(model.outputs))]
    assert steps(path, got, x) <= ONE_STEP


def test_dwnet_import(qmodels: dict[Any, Any]) -> None:
    """A Conv whose groups are one input channel each is depthwise_conv2d, its weights
    [1, KH, KW, C * multiplier] quantized per channel along axis 3."""
    path, _ = qmodels[("dwnet", True)]
    imported = import_file(path)
    ops = imported.doc["operators"]
    assert [o["op"] for o in ops] == ["transpose", "quantize", "conv2d", "depthwise_conv2d",
                                      "reshape", "fully_connected", "dequantize"]
    assert ops[3]["attrs"]["depth_multiplier"] == 2
    w = imported.doc["constants"][ops[3]["inputs"][1]]
    assert w["shape"] == [1, 3, 3, 8] and w["quant"]["axis"] == 3


@pytest.mark.parametrize("build", [mlp, convnet, dwnet], ids=lambda b: b.__name__)
def test_qoperator_within_one_step(build: Callable[..., Any], tmp_path: Path) -> None:
    """quantize_static's QOperator format (QLinearConv, QLinearMatMul, com.microsoft QGemm,
    Flatten on int8): the same int8 operators, within one step of ONNX Runtime."""
    path, shape = quantize(tmp_path, build, True, quant_format=oq.QuantFormat.QOperator)
    kinds = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert kinds & {"QLinearConv", "QLinearMatMul", "QGemm"}
    assert not kinds & {"Conv", "Gemm", "MatMul"}
    model = import_file(path).to_model()
    x = inputs(shape, 3)
    got = reference.evaluate(model, {"x": x})[next(iter(model.outputs))]
    assert steps(path, got, x) <= ONE_STEP


def _qdq_relu(s1: float, z1: int, s2: float, z2: int, act: str) -> bytes:
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
    relu = (n("Relu", ["d1"], ["r"]) if act == "Relu"
            else n("Clip", ["d1", "lo", "hi"], ["r"]))
    nodes = [n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]),
             n("DequantizeLinear", ["qx", "sx", "zx"], ["dx"]),
             n("DequantizeLinear", ["w", "sw", "zw"], ["dw"]),
             n("DequantizeLinear", ["b", "sb", "zb"], ["db"]),
             n("Conv", ["dx", "dw", "db"], ["c"], pads=[1, 1, 1, 1]),
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
    imported = import_file(path)
    got_ops = [o["op"] for o in imported.doc["operators"]]
    assert got_ops == ["transpose", "quantize", *ops, "dequantize", "transpose"]
    conv = imported.doc["operators"][2]
    assert conv["attrs"]["activation"] == ("RELU" if act == "Relu" else "RELU6")
    model = imported.to_model()
    for seed in (1, 2):
        x = (np.random.default_rng(seed).standard_normal((1, 2, 5, 5)) * 2).astype(np.float32)
        got = reference.evaluate(model, {"x": x})["y"]
        assert steps(path, got, x) <= ONE_STEP


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
@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "cnn"] + [("cnn", True)],
                         ids=_id)
def test_run_host_within_one_step(qmodels: dict[Any, Any], case: tuple[str, bool],
                                  cli: Callable[..., Result], tmp_path: Path) -> None:
    """``tvmdev run`` on the host (the C kernels) against ONNX Runtime: every element
    within one step. The CNN needs the int8 add and pools (NEEDS_POOLS)."""
    if case[0] == "cnn" and not _has_pools():
        pytest.skip("the int8 add and pools are not in the op table yet")
    path, shape = qmodels[case]
    x = inputs(shape, 11)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", x)
    r = cli("run", str(path), "--board", "host", "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    got = np.load(tmp_path / "out" / "y.npy")
    assert steps(path, got, x) <= ONE_STEP
