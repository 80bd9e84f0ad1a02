"""ONNX's own single-node backend tests for the operators tvmdev imports, ONNX Runtime as
the reference, and the merging of many imported cases into one model (one build).

The cases are ``onnx.backend.test.loader.load_model_tests(kind="node")``, restricted to
models made only of operators tvmdev maps. onnx generates them by running its case
modules (seconds, mostly the 3-D pooling references), so the fast lane generates only
the modules of those operators and keeps the result in the models cache
(``tests/models.py``: ``~/.cache/tvmdev-models/onnx-node-<onnx version>-<ops hash>/``);
a slow test checks that this is the same set ``load_model_tests`` gives.

Operands that ONNX's tests feed as graph inputs but that a deployed model holds as
weights, and that tvmdev needs at import (Reshape's shape, Pad's pads, Clip's bounds,
BatchNormalization's statistics...), are made initializers with the test's values
(``frozen``): the model ONNX Runtime runs is that same frozen model.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Elementwise math, reductions, Gather and LayerNormalization (tvmdev/frontends/onnx_math.py).
MATH = ("Abs", "Erf", "Exp", "Gather", "Gelu", "LayerNormalization", "Log", "Neg", "Pow",
        "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum", "Sqrt")
MATH_MODULES = ("abs", "erf", "exp", "gather", "gelu", "layernormalization", "log", "neg",
                "pow", "reducemax", "reducemin", "reduceprod", "reducesum", "sqrt",
                # their expanded cases (functions of the operators above)
                "reduce_log_sum", "reducel1", "reducesumsquare")
MATH_FROZEN = {"ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,), "ReduceSum": (1,)}
# Slicing, resizing and transposed convolution (tvmdev/frontends/onnx_shape_ops.py).
SHAPE = ("ConvTranspose", "Resize", "Slice", "Split")
SHAPE_MODULES = ("convtranspose", "resize", "slice", "split")
SHAPE_FROZEN = {"Resize": (1, 2, 3), "Slice": (1, 2, 3, 4), "Split": (1,)}

SUPPORTED = ("Add", "AveragePool", "BatchNormalization", "Clip", "Concat", "Conv", "Div",
             "Dropout", "Flatten", "Gemm", "GlobalAveragePool", "Identity", "MatMul",
             "MaxPool", "Mul", "Pad", "ReduceMean", "Relu", "Reshape", "Sigmoid", "Softmax",
             "Sub", "Tanh", "Transpose", *MATH, *SHAPE)
# onnx.backend.test.case.node modules that hold these operators' cases.
MODULES = ("add", "averagepool", "batch_normalization", "clip", "concat", "conv", "div",
           "dropout",
           "flatten", "gemm", "globalaveragepool", "identity", "matmul", "maxpool", "mul",
           "pad", "reducemean", "relu", "reshape", "sigmoid", "softmax", "sub", "tanh",
           "transpose", *MATH_MODULES, *SHAPE_MODULES)
# Operand positions known at import in a deployed model.
FROZEN = {"Reshape": (1,), "Pad": (1, 2, 3), "ReduceMean": (1,), "Clip": (1, 2),
          "BatchNormalization": (1, 2, 3, 4), **MATH_FROZEN, **SHAPE_FROZEN}


@dataclass
class NodeCase:
    name: str
    model: bytes  # as ONNX ships it
    inputs: list[np.ndarray] | None  # None: not plain tensors (sequences, optionals)

    def proto(self) -> Any:
        import onnx
        return onnx.load_model_from_string(self.model)

    def kinds(self) -> list[str]:
        return [n.op_type for n in self.proto().graph.node]


def supported(model: Any) -> bool:
    """Whether a case's model is made only of operators tvmdev maps."""
    return bool(model.graph.node) and all(n.op_type in SUPPORTED and n.domain in ("",)
                                          for n in model.graph.node)


def _cache() -> Path:
    """The cached selection, named after the onnx version and the operators and modules
    selected."""
    import hashlib

    import onnx
    from models import cache_dir
    ops = hashlib.sha256(repr((sorted(SUPPORTED), sorted(MODULES))).encode()).hexdigest()[:8]
    return cache_dir() / f"onnx-node-{onnx.__version__}-{ops}"


def _generate() -> list[Any]:
    import onnx.backend.test.case.node as node_cases
    for m in MODULES:
        importlib.import_module(f"onnx.backend.test.case.node.{m}")
    return [c for c in node_cases._NodeTestCases if supported(c.model)]


def _plain(values: list[Any]) -> list[np.ndarray] | None:
    if all(isinstance(v, (np.ndarray, np.generic)) for v in values):
        return [np.asarray(v) for v in values]
    return None


def node_cases() -> list[NodeCase]:
    """The supported operators' node cases, from the cache (made on first use)."""
    folder = _cache()
    index = folder / "index.txt"
    if not index.is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent))
        names = []
        for c in _generate():
            (tmp / f"{c.name}.onnx").write_bytes(c.model.SerializeToString())
            ins = _plain(list(c.data_sets[0][0]))
            if ins is not None:
                np.savez(tmp / f"{c.name}.npz", *ins)
            names.append(c.name)
        (tmp / "index.txt").write_text("\n".join(names) + "\n")
        try:
            os.replace(tmp, folder)
        except OSError:  # another worker made it first
            shutil.rmtree(tmp, ignore_errors=True)
    out = []
    for name in index.read_text().split():
        data = folder / f"{name}.npz"
        ins = None
        if data.is_file():
            with np.load(data) as z:
                ins = [z[f"arr_{i}"] for i in range(len(z.files))]
        out.append(NodeCase(name, (folder / f"{name}.onnx").read_bytes(), ins))
    return out


def generated_names() -> list[str]:
    """The same selection from ``load_model_tests(kind="node")`` (every case module)."""
    from onnx.backend.test.loader import load_model_tests
    return [c.name for c in load_model_tests(kind="node") if supported(c.model)]


def frozen(case: NodeCase) -> tuple[bytes, dict[str, np.ndarray]]:
    """The case's model with its static operands as initializers, and the feeds of the
    inputs left."""
    import onnx
    model = case.proto()
    assert case.inputs is not None
    node = model.graph.node[0]
    static = {node.input[i] for i in FROZEN.get(node.op_type, ())
              if len(model.graph.node) == 1 and i < len(node.input)}
    feeds = {}
    for vi, x in zip(list(model.graph.input), case.inputs, strict=True):
        if vi.name in static:
            model.graph.initializer.append(onnx.numpy_helper.from_array(x, vi.name))
            model.graph.input.remove(vi)
        else:
            feeds[vi.name] = x
    return model.SerializeToString(), feeds


def ort_run(model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs ONNX Runtime computes, on one thread."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4  # the tests report what ONNX Runtime rejects themselves
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def merge(parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]], name: str
          ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Imported models (doc, arrays) side by side in one model, case k's names prefixed
    with ``c<k>_``: one build runs them all."""
    doc: dict[str, Any] = {"name": name, "devices": {}, "inputs": {}, "outputs": {},
                           "constants": {}, "operators": []}
    arrays: dict[str, np.ndarray] = {}
    for k, (d, arr) in enumerate(parts):
        def p(t: str, k: int = k) -> str:
            return f"c{k}_{t}" if t else t
        doc["devices"].update(d["devices"])
        for key in ("inputs", "outputs"):
            doc[key].update({p(t): spec for t, spec in d[key].items()})
        for t, spec in d["constants"].items():
            doc["constants"][p(t)] = {**spec, "npy": p(spec["npy"])}
            arrays[p(spec["npy"])] = arr[spec["npy"]]
        for op in d["operators"]:
            doc["operators"].append({**op, "name": p(op["name"]),
                                     "inputs": [p(t) for t in op["inputs"]],
                                     "outputs": [p(t) for t in op["outputs"]]})
    return doc, arrays
