"""Values as :func:`tvmdev.model.reference.evaluate` holds them, and the state a reset
leaves."""

from __future__ import annotations

import numpy as np

from .graph import Model

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint32", "uint64")

# The model's state between calls of evaluate: state tensor name -> its value.
State = dict[str, np.ndarray]


def stored(model: Model, name: str, v: np.ndarray) -> np.ndarray:
    """A value as evaluate holds it: float64, 64-bit integers (16x8 biases, raw uint64)
    in their own dtype, as float64's mantissa does not hold them (and raw int16 and uint32,
    which the raw-integer references take in their dtype)."""
    dt = model.tensors[name].dtype if name in model.tensors else "float32"
    if dt in ("int64", "uint32", "uint64") or dt == "int16" and model.tensors[name].quant is None:
        return np.asarray(v).astype(np.dtype(dt))
    return np.asarray(v, np.float64)


def reset_state(model: Model) -> State:
    """Every state tensor as a reset leaves it (TFLM's ResetVariableTensors, and the noise
    estimate's reset, which zeroes its persistent buffer): filled with
    :meth:`~tvmdev.model.graph.Model.state_fill`'s byte."""
    out = {}
    for name in model.states:
        t = model.tensors[name]
        fill = np.full(t.nbytes, model.state_fill(name), np.uint8)
        out[name] = fill.view(np.dtype(t.dtype)).reshape(t.shape).copy()
    return out
