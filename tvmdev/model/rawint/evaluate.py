"""The numpy reference of an operator in its raw-integer form, for
:func:`tvmdev.model.reference.evaluate`."""

from __future__ import annotations

import numpy as np

from ...errors import TvmdevError
from ..graph import Model, Operator
from ..s8.call import S8Call
from .table import INT_OPS


def raw_reference(model: Model, op: Operator, args: list[np.ndarray | None]) -> np.ndarray:
    """An operator in its raw-integer form, its inputs in their own dtypes."""
    ts = [model.tensors[t] if t is not None else None for t in op.inputs]
    out = model.tensors[op.outputs[0]]
    call = S8Call([t.shape if t else None for t in ts], out.shape, op.attr_dict,
                  [t.dtype if t else None for t in ts] + [out.dtype],
                  [t.quant if t else None for t in ts] + [out.quant])
    typed = [np.asarray(v).astype(np.dtype(t.dtype)) if v is not None and t else None
             for v, t in zip(args, ts, strict=True)]
    try:
        y = INT_OPS[op.op].reference(call, typed)
    except ValueError as exc:
        raise TvmdevError(f"operator '{op.name}' ({op.op}): these inputs take it where "
                          f"TFLM's kernels trap: {exc}", op.where,
                          hint="run other inputs (--inputs DIR)") from None
    return np.asarray(y).astype(np.dtype(out.dtype)).reshape(out.shape)
