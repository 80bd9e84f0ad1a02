"""int8 operators that move values without computing on them, as TFLM's kernels do:
TRANSPOSE copies the bytes (its Prepare checks only that both tensors are int8, so the
output keeps the input's values whatever its quantization says). Params are the float
kernel's struct, ``tvmk_transpose_params`` (``tvmk_portable.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..shapes import transpose_params
from .call import S8Call, S8Op


def _transpose_params(c: S8Call) -> dict[str, Any]:
    return transpose_params(c.shapes, c.out_shape, c.attrs)


def _transpose_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    perm = c.attrs.get("perm")
    return np.transpose(np.asarray(v), perm).astype(np.int8)


OPS = {
    "transpose": S8Op("tvmk_transpose_params", _transpose_params, _transpose_ref,
                      ("int8", "int8")),
}
