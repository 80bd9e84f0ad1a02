"""Small float ONNX models built with ``onnx.helper`` and quantized by onnxruntime's
``quantize_static`` (int8, seeded calibration), and ONNX Runtime's output on them, for
tests/test_onnx_qdq.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_build as B
import onnxruntime as ort
from onnxruntime import quantization as oq

n = onnx.helper.make_node
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


def zoo(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Conv, Relu, depthwise Conv, swish (Sigmoid, Mul), Concat, Pad, 1x1 Conv, Tanh,
    AveragePool, GlobalAveragePool, Flatten, MatMul, Softmax. quantize_static leaves Tanh
    in float (and so the AveragePool after it): tvmdev runs those in float32 too."""
    inits = [_w(rng, "w1", (8, 3, 3, 3)), _w(rng, "b1", (8,), 0.1),
             _w(rng, "w2", (8, 1, 3, 3), 0.5), _w(rng, "b2", (8,), 0.1),
             _w(rng, "w3", (8, 16, 1, 1), 0.3), _w(rng, "w4", (8, 10), 0.5),
             B.init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))]
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "w2", "b2"], ["c2"], group=8, pads=[1, 1, 1, 1]),
             n("Sigmoid", ["c2"], ["sg"]), n("Mul", ["c2", "sg"], ["sw"]),
             n("Concat", ["r1", "sw"], ["cat"], axis=1), n("Pad", ["cat", "pads"], ["pd"]),
             n("Conv", ["pd", "w3"], ["c3"]), n("Tanh", ["c3"], ["t"]),
             n("AveragePool", ["t"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
             n("GlobalAveragePool", ["ap"], ["gap"]), n("Flatten", ["gap"], ["f"]),
             n("MatMul", ["f", "w4"], ["mm"]), n("Softmax", ["mm"], ["y"], axis=-1)]
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
    """The float model built by ``build``, quantized by quantize_static (QDQ unless
    ``quant_format`` says otherwise, int8)."""
    raw, shape = build(np.random.default_rng(seed))
    tag = f"{per_channel}_{kw.get('quant_format', 'qdq')}".replace(".", "_")
    fp, qp = tmp / f"{build.__name__}_float.onnx", tmp / f"{build.__name__}_{tag}.onnx"
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


MODELS = {"mlp": mlp, "convnet": convnet, "dwnet": dwnet, "cnn": cnn, "zoo": zoo}
