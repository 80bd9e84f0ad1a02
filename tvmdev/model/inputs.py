"""Seeded inputs for a model: the ranges its reference and ``tvmdev run`` draw them from."""

from __future__ import annotations

import numpy as np

from .graph import Model


def input_range(model: Model, name: str) -> tuple[float, float]:
    """The range seeded inputs are drawn from: [-1, 1), or for a float input that is
    quantized, the range its quantization spans."""
    for op in model.operators:
        if op.op == "quantize" and op.inputs[0] == name:
            q = model.tensors[op.outputs[0]].quant
            if q is not None:
                info = np.iinfo(model.tensors[op.outputs[0]].dtype)
                return (q.scale[0] * (info.min - q.zero_point[0]),
                        q.scale[0] * (info.max - q.zero_point[0]))
    return -1.0, 1.0


def index_range(model: Model, name: str) -> tuple[int, int]:
    """The values an int32 input may hold, [lo, hi): the indices every gather reading it
    takes ([-n, n) along a dim of n), else int32's."""
    lo, hi = -(1 << 31), 1 << 31
    for op in model.operators:
        if op.op == "gather" and op.inputs[1] == name:
            data = model.tensors[str(op.inputs[0])].shape
            n = data[op.attr_dict["axis"] % len(data)]
            lo, hi = max(lo, -n), min(hi, n)
    return lo, hi


def random_inputs(model: Model, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs, one array per model input: int8 ones over [-128, 127], int16 (16x8
    or raw), uint32 and uint64 ones over their whole range, quantized int32 ones over
    int16's, other int32 ones over :func:`index_range` (at most [-128, 128)), float32
    ones over :func:`input_range`."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in model.inputs:
        t = model.tensors[name]
        if t.dtype == "int8":
            out[name] = rng.integers(-128, 128, t.shape).astype(np.int8)
        elif t.dtype == "int32" and t.quant is not None:  # quantized (requantized to int16)
            out[name] = rng.integers(-(1 << 15), 1 << 15, t.shape).astype(np.int32)
        elif t.dtype in ("int16", "uint32", "uint64"):  # int16 and raw ones: their range
            info = np.iinfo(np.dtype(t.dtype))
            out[name] = rng.integers(int(info.min), int(info.max), t.shape, dtype=t.dtype,
                                     endpoint=True)
        elif t.dtype == "int32":
            first, end = index_range(model, name)
            out[name] = rng.integers(max(first, -128), min(end, 128), t.shape).astype(np.int32)
        else:
            lo, hi = input_range(model, name)
            out[name] = rng.uniform(lo, hi, t.shape).astype(np.float32)
    return out
