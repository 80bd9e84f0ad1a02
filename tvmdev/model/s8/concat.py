"""int8 CONCATENATION, as TFLM does it: a copy of each input's blocks in turn. TFLM's
Prepare requires every input to be quantized exactly as the output (same float scale,
same zero point) and refuses the model otherwise; so does ``params``. Params are
``tvmk_concat_s8_params`` (``tvmk_s8_ops.h``), the same fields as the float kernel's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..quant import Quant
from ..regions import concat_params
from ..shapes import Shape
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar

MAX_INPUTS = 10  # TFLM's kMaxInputNum


def params(shapes: list[Shape | None], out: Shape, axis: int, quants: list[Quant],
           qout: Quant) -> dict[str, Any]:
    """``tvmk_concat_s8_params`` for the inputs (``quants``) joined along ``axis``."""
    want = scalar(qout, "the output")
    if len(shapes) > MAX_INPUTS:
        raise ValueError(f"TFLM concatenates at most {MAX_INPUTS} tensors")
    for i, q in enumerate(quants):
        got = scalar(q, f"input {i}")
        if got != want:
            raise ValueError(f"input {i} of an int8 concatenation is quantized as "
                             f"{got}, the output as {want}: TFLM requires the same")
    return concat_params(shapes, out, {"axis": axis})


def reference(xs: list[np.ndarray], axis: int) -> np.ndarray:
    """int8 concatenation of ``xs`` along ``axis``."""
    return np.concatenate([x.astype(np.int8) for x in xs], axis=axis)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    quants = [quant_of(c, i, f"input {i}") for i in range(len(c.shapes))]
    return params(c.shapes, c.out_shape, c.attrs["axis"], quants,
                  quant_of(c, -1, "the output"))


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    _params(c)
    return reference([np.asarray(v) for v in x if v is not None], c.attrs["axis"])


OPS = {"concat": S8Op("tvmk_concat_s8_params", _params, _ref, ("int8", "int8"))}
