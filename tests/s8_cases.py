"""Single-operator int8 .tflite models for tests/test_s8_ops.py, each with the params and
numpy reference of tvmdev/model/s8 for the same operator, and TFLM's interpreter output.

A case is built from seeded random quantizations (scales log-uniform, zero points over
the int8 range) and shapes; its inputs span the whole int8 range. ``Case.tflm()`` runs
the model in TFLM; ``Case.ref`` is tvmdev's numpy reference; ``Case.params`` the kernel's
params struct values and ``Case.kernel_inputs`` the arrays the C kernel takes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tflm_ref
from tflite_build import Graph, Op, T, build

from tvmdev.model.quant import Quant

INT8, INT32 = 9, 2
# BuiltinOperator codes and fused activations (TFLite's schema).
ADD, AVERAGE_POOL_2D, CONCATENATION, LOGISTIC, MAX_POOL_2D, MUL = 0, 1, 2, 14, 17, 18
SOFTMAX, TANH, PAD, MEAN, PADV2 = 25, 28, 34, 40, 60
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


@dataclass
class Tensor:
    """A tensor of a one-op model: an int8 input (``data`` None) or a constant."""

    shape: list[int]
    quant: Quant | None = None
    data: np.ndarray | None = None
    type: int = INT8


@dataclass
class Case:
    label: str
    code: int
    inputs: list[Tensor]
    output: Tensor
    options: tuple[str, dict[str, float]] | None
    arrays: list[np.ndarray]  # the model's non-constant inputs, in order
    params: dict[str, Any] = field(default_factory=dict)
    ref: np.ndarray | None = None
    more: list[Tensor] = field(default_factory=list)  # outputs after the first (SPLIT's)

    @property
    def outputs(self) -> list[Tensor]:
        """Every output of the operator."""
        return [self.output, *self.more]

    def model(self) -> bytes:
        """The .tflite bytes of this case."""
        tensors = []
        for i, t in enumerate([*self.inputs, *self.outputs]):
            quant = None
            if t.quant is not None:
                quant = (list(t.quant.scale), list(t.quant.zero_point))
            tensors.append(T(f"t{i}", t.shape, t.data, type=t.type, quant=quant))
        n, outs = len(self.inputs), list(range(len(self.inputs), len(tensors)))
        graph = Graph(tensors, [Op(self.code, list(range(n)), outs, self.options)],
                      [i for i, t in enumerate(self.inputs) if t.data is None], outs)
        return build(graph)

    def tflm(self) -> np.ndarray:
        """TFLM's output for this case's inputs."""
        return tflm_ref.outputs(self.model(), self.arrays, 1)[0]


def merged(cases: list[Case]) -> tuple[bytes, list[np.ndarray]]:
    """One .tflite holding every case's operator (each with its own tensors) and the
    inputs in the model's order."""
    tensors: list[T] = []
    ops, inputs, outputs = [], [], []
    arrays: list[np.ndarray] = []
    for k, case in enumerate(cases):
        base = len(tensors)
        for i, t in enumerate([*case.inputs, *case.outputs]):
            quant = (list(t.quant.scale), list(t.quant.zero_point)) if t.quant else None
            tensors.append(T(f"c{k}_t{i}", t.shape, t.data, type=t.type, quant=quant))
            if i < len(case.inputs) and t.data is None:
                inputs.append(base + i)
        n = len(case.inputs)
        outs = [base + n + j for j in range(len(case.outputs))]
        ops.append(Op(case.code, [base + i for i in range(n)], outs, case.options))
        outputs += outs
        arrays += case.arrays
    return build(Graph(tensors, ops, inputs, outputs)), arrays


def output_labels(cases: list[Case]) -> list[str]:
    """The label of each output of the merged model (a case's once per output)."""
    return [c.label for c in cases for _ in c.outputs]


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def rand_quant(r: np.random.Generator, lo: float = 0.002, hi: float = 0.5) -> Quant:
    """A per-tensor quantization: a float32 scale, log-uniform in [lo, hi), any zp."""
    scale = float(np.float32(np.exp(r.uniform(np.log(lo), np.log(hi)))))
    return Quant((scale,), (int(r.integers(-128, 128)),))


def fixed_quant(scale: float, zp: int) -> Quant:
    return Quant((float(np.float32(scale)),), (zp,))


def rand_int8(r: np.random.Generator, shape: list[int] | tuple[int, ...]) -> np.ndarray:
    return r.integers(-128, 128, size=tuple(shape), dtype=np.int64).astype(np.int8)


Builder = Callable[[np.random.Generator, int], Case]
