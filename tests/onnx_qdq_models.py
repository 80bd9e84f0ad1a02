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


def smooth(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...]]:
    """Conv, Sigmoid, Conv, Tanh, Flatten, Gemm, with small weights: the calibrated
    Sigmoid and Tanh outputs span less than their full range, at steps finer than TFLM's
    fixed 1/256 and 1/128."""
    inits = [_w(rng, "w1", (4, 3, 3, 3), 0.05), _w(rng, "w2", (4, 4, 3, 3), 0.1),
             _w(rng, "w3", (5, 4 * 4 * 4), 0.3)]
    nodes = [n("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), n("Sigmoid", ["c1"], ["s"]),
             n("Conv", ["s", "w2"], ["c2"], pads=[1, 1, 1, 1]), n("Tanh", ["c2"], ["t"]),
             n("Flatten", ["t"], ["f"]), n("Gemm", ["f", "w3"], ["y"], transB=1)]
    return (B.model(nodes, [B.tensor("x", [1, 3, 4, 4])], [B.tensor("y", [1, 5])], inits),
            (1, 3, 4, 4))


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


MODELS = {"mlp": mlp, "convnet": convnet, "dwnet": dwnet, "cnn": cnn, "zoo": zoo,
          "smooth": smooth}


def ort_layers(path: Path, x: np.ndarray) -> dict[str, np.ndarray]:
    """ONNX Runtime's int8 tensors (every node's output, the int8 ones kept), one thread,
    at the basic optimization level (the model as written)."""
    m = onnx.load(str(path))
    known = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for t in node.output:
            if t not in known:
                m.graph.output.add().name = t  # untyped: ONNX Runtime types it
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    return {k: v for k, v in zip(names, (np.asarray(v) for v in s.run(None, {"x": x})),
                                 strict=True) if v.dtype == np.int8}


def layer_steps(path: Path, model: Any, x: np.ndarray) -> dict[str, int]:
    """Each int8 operator of tvmdev's ``model`` (imported from ``path``) fed ONNX
    Runtime's int8 values of its operands where ONNX Runtime has them (NCHW made NHWC):
    its output's largest difference from ONNX Runtime's, in steps, by tensor. Operators
    that only move values (reshape, transpose) are not compared: a flatten's order is
    NHWC inside tvmdev."""
    import dataclasses

    from tvmdev.model import reference
    want = ort_layers(path, x)
    values: dict[str, np.ndarray] = {"x": x}
    out: dict[str, int] = {}
    for op in model.operators:
        one = dataclasses.replace(model, operators=(op,))
        args = {t: values[t] for t in op.inputs if t is not None and t in values}
        y = reference.evaluate(one, args)[op.outputs[0]]
        w = want.get(op.outputs[0])
        if w is not None and w.dtype == np.int8 and op.op not in ("reshape", "transpose"):
            ort_y = w.transpose(0, 2, 3, 1) if w.ndim == 4 else w
            assert ort_y.shape == y.shape, (op.name, ort_y.shape, y.shape)
            out[op.outputs[0]] = int(np.max(np.abs(y.astype(np.int64) - ort_y)))
            y = ort_y
        values[op.outputs[0]] = y
    return out


# Lipschitz constants of the smooth activations (|f'| <= L; softmax in the max norm), and
# the output step tvmdev's int8 kernel computes them at before requantizing to the model's
# (TFLM's fixed output quantization: one more rounding).
SMOOTH = {"Sigmoid": (0.25, 1 / 256), "Tanh": (1.0, 1 / 128), "Softmax": (0.5, 1 / 256)}
# Operators that move no value by more than their inputs moved.
NONEXPANSIVE = ("Relu", "Clip", "MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean",
                "Flatten", "Reshape", "Pad", "Concat", "Transpose")


def _real(inits: dict[str, np.ndarray], node: Any) -> np.ndarray:
    """A constant DequantizeLinear's real values."""
    q, s = inits[node.input[0]].astype(np.float64), inits[node.input[1]].astype(np.float64)
    z = inits[node.input[2]].astype(np.float64) if len(node.input) > 2 else np.zeros_like(s)
    if s.ndim == 1 and q.ndim > 1:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1) % q.ndim
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return np.asarray((q - z) * s)


def _gain(node: Any, w: np.ndarray) -> float:
    """The largest sum of |weights| that makes one output of a Conv, Gemm or MatMul."""
    trans_b = any(a.name == "transB" and a.i for a in node.attribute)
    rows = (w.reshape(w.shape[0], -1) if node.op_type == "Conv" or trans_b else w.T)
    return float(np.abs(rows).sum(axis=1).max())


def bound(path: Path) -> float:
    """How many output steps tvmdev's int8 result of the QDQ model at ``path`` can differ
    from ONNX Runtime's (as written: DequantizeLinear, the float op, QuantizeLinear).

    Each QuantizeLinear rounds a real value: ONNX Runtime its float32 value once, ties to
    even; tvmdev's kernels (TFLM's arithmetic) the exact integer sum through a fixed-point
    multiplier, rounding twice, ties away from zero. Each is within half a step (and a
    rounding of the multiplier or of float32), so values that differ by D before the
    QuantizeLinear differ by at most D + one step after it. Every operator after moves the
    difference by its gain: a Conv, Gemm or MatMul by its largest sum of |weights| per
    output, an Add by the sum of both differences, a Mul by each side's difference times
    the other's range, Sigmoid, Tanh and Softmax by their Lipschitz constants (plus one
    step of the fixed output quantization tvmdev computes them at), and the rest (Relu,
    pools, Concat, Pad, reshapes) not at all. The bound is the output's difference over
    its step, a real difference D tracked per tensor through the graph."""
    m = onnx.load(str(path))
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    consts: dict[str, np.ndarray] = {}
    diff: dict[str, float] = {}
    reach: dict[str, float] = {}  # the largest |value| of a dequantized tensor
    quantized = {node.input[0] for node in m.graph.node if node.op_type == "QuantizeLinear"}
    for node in m.graph.node:
        op, out = node.op_type, node.output[0]
        d = [diff.get(t, 0.0) for t in node.input if t]
        if op == "DequantizeLinear" and node.input[0] in inits:
            consts[out] = _real(inits, node)
        elif op == "QuantizeLinear":
            diff[out] = d[0] + float(inits[node.input[1]])
        elif op == "DequantizeLinear":
            s, z = float(inits[node.input[1]]), int(inits[node.input[2]])
            diff[out], reach[out] = d[0], max(z + 128, 127 - z) * s
        elif op in ("Conv", "Gemm", "MatMul"):
            diff[out] = _gain(node, consts[node.input[1]]) * d[0]
        elif op == "Add":
            diff[out] = d[0] + d[1]
        elif op == "Mul":
            a, b = node.input[0], node.input[1]
            diff[out] = reach[a] * d[1] + reach[b] * d[0] + d[0] * d[1]
        elif op in SMOOTH:
            lip, step = SMOOTH[op]
            diff[out] = lip * d[0] + (step if out in quantized else 0.0)
        else:
            assert op in NONEXPANSIVE, op
            diff[out] = max(d)
    return diff[m.graph.output[0].name] / output_scale(path)
