"""Small ONNX models built in the tests with ``onnx.helper``: the multi-layer models the
importer is checked on against ONNX Runtime, and small ones for the bad-model cases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _h() -> Any:
    from onnx import helper
    return helper


def tensor(name: str, shape: Sequence[int | str] | None, elem: int = 1) -> Any:
    """A graph input or output (elem 1: float32)."""
    return _h().make_tensor_value_info(name, elem, shape)


def init(name: str, value: np.ndarray) -> Any:
    """An initializer."""
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (),
          opset: int = 13, domains: dict[str, int] | None = None) -> bytes:
    """A serialized model (not checked: bad models are built with this too)."""
    h = _h()
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v)
                                         for d, v in (domains or {}).items()]
    m = h.make_model(graph, opset_imports=ops, producer_name="tvmdev-tests")
    m.ir_version = 8
    return bytes(m.SerializeToString())


class _Weights:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.inits: list[Any] = []

    def add(self, name: str, shape: Sequence[int], low: float = -0.5, high: float = 0.5
            ) -> str:
        self.inits.append(init(name, self.rng.uniform(low, high, shape).astype(np.float32)))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(init(name, value))
        return name

    def bn(self, prefix: str, x: str, y: str, c: int) -> Any:
        """A BatchNormalization with seeded statistics."""
        ins = [x, self.add(f"{prefix}.weight", [c], 0.5, 1.5),
               self.add(f"{prefix}.bias", [c], -0.3, 0.3),
               self.add(f"{prefix}.running_mean", [c], -0.2, 0.2),
               self.add(f"{prefix}.running_var", [c], 0.5, 2.0)]
        return _h().make_node("BatchNormalization", ins, [y], name=prefix, epsilon=1e-5)


def residual() -> bytes:
    """A residual CNN block with batch norm, as PyTorch exports it (opset 13): stem
    conv-bn-relu, then conv-bn-relu-conv-bn plus the skip, relu; max pool, global average
    pool, x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, Reshape), Dropout,
    Gemm (transB), Softmax."""
    n, w = _h().make_node, _Weights(11)
    nodes = [
        n("Conv", ["input", w.add("stem.weight", [8, 3, 3, 3])], ["s"], name="stem",
          pads=[1, 1, 1, 1]),
        w.bn("stem_bn", "s", "s_bn", 8), n("Relu", ["s_bn"], ["a0"], name="relu0"),
        n("Conv", ["a0", w.add("conv1.weight", [8, 8, 3, 3])], ["c1"], name="conv1",
          pads=[1, 1, 1, 1]),
        w.bn("bn1", "c1", "b1", 8), n("Relu", ["b1"], ["r1"], name="relu1"),
        n("Conv", ["r1", w.add("conv2.weight", [8, 8, 3, 3]), w.add("conv2.bias", [8])],
          ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        w.bn("bn2", "c2", "b2", 8), n("Add", ["b2", "a0"], ["sum"], name="skip"),
        n("Relu", ["sum"], ["block"], name="relu2"),
        n("MaxPool", ["block"], ["mp"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["mp"], ["gap"], name="gap"),
        n("Shape", ["gap"], ["shape"], name="shape"),
        n("Gather", ["shape", w.const("zero", np.array(0, np.int64))], ["batch"],
          name="gather", axis=0),
        n("Unsqueeze", ["batch", w.const("axes0", np.array([0], np.int64))], ["batch1"],
          name="unsqueeze"),
        n("Concat", ["batch1", w.const("minus1", np.array([-1], np.int64))], ["newshape"],
          name="concat", axis=0),
        n("Reshape", ["gap", "newshape"], ["flat"], name="view"),
        n("Dropout", ["flat"], ["dropped"], name="dropout"),
        n("Gemm", ["dropped", w.add("fc.weight", [10, 8]), w.add("fc.bias", [10])],
          ["logits"], name="fc", transB=1),
        n("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    return model(nodes, [tensor("input", [1, 3, 16, 16])],
                 [tensor("probs", [1, 10]), tensor("block", [1, 8, 16, 16])], w.inits)


def mobilenet() -> bytes:
    """A MobileNet-style depthwise-separable block (opset 13): conv-bn-relu6 (Clip with
    min and max initializers), depthwise conv as a group conv with bn and relu6, pointwise
    conv-bn-relu, global average pool, flatten, gemm (then bn folded into it), softmax."""
    n, w = _h().make_node, _Weights(12)
    lo, hi = w.const("clip_min", np.array(0.0, np.float32)), w.const(
        "clip_max", np.array(6.0, np.float32))
    nodes = [
        n("Conv", ["image", w.add("conv0.weight", [16, 4, 3, 3], -1, 1)], ["c0"],
          name="conv0", strides=[2, 2], pads=[1, 1, 1, 1]),
        w.bn("bn0", "c0", "b0", 16), n("Clip", ["b0", lo, hi], ["a0"], name="relu6_0"),
        n("Conv", ["a0", w.add("dw.weight", [16, 1, 3, 3], -1, 1)], ["d"],
          name="depthwise", group=16, pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        w.bn("bn_dw", "d", "bd", 16), n("Clip", ["bd", lo, hi], ["a1"], name="relu6_1"),
        n("Conv", ["a1", w.add("pw.weight", [32, 16, 1, 1]), w.add("pw.bias", [32])],
          ["p"], name="pointwise"),
        w.bn("bn_pw", "p", "bp", 32), n("Relu", ["bp"], ["a2"], name="relu"),
        n("GlobalAveragePool", ["a2"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flatten"),
        n("Gemm", ["flat", w.add("fc.weight", [32, 10])], ["fc"], name="fc"),
        w.bn("bn_fc", "fc", "fcb", 10),
        n("Identity", ["fcb"], ["logits"], name="identity"),
        n("Softmax", ["logits"], ["output"], name="softmax"),
    ]
    return model(nodes, [tensor("image", [1, 4, 12, 12])], [tensor("output", [1, 10])],
                 w.inits)


def relu(x: Any = None, y: Any = None, opset: int = 13) -> bytes:
    """x -> Relu -> y."""
    x, y = x or tensor("x", [1, 4]), y or tensor("y", [1, 4])
    return model([_h().make_node("Relu", [x.name], [y.name], name="relu")], [x], [y],
                 opset=opset)
