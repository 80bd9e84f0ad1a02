"""int8 operators that move values without computing on them, as TFLM's kernels do:
TRANSPOSE, RESIZE_NEAREST_NEIGHBOR and STRIDED_SLICE (SPLIT and SPLIT_V too) copy the
bytes (their Prepare checks only the dtypes, so the output keeps the input's values
whatever its quantization says). Params
are the float kernels' structs, ``tvmk_transpose_params``,
``tvmk_resize_nearest_params`` and ``tvmk_strided_slice_params`` (``tvmk_portable.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..resize import resize_params, resize_reference
from ..shapes import transpose_params
from ..slicing import strided_slice_params, strided_slice_reference
from .call import S8Call, S8Op


def _transpose_params(c: S8Call) -> dict[str, Any]:
    return transpose_params(c.shapes, c.out_shape, c.attrs)


def _transpose_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    perm = c.attrs.get("perm")
    return np.transpose(np.asarray(v), perm).astype(np.int8)


def _resize_params(c: S8Call) -> dict[str, Any]:
    return resize_params(c.shapes, c.out_shape, c.attrs)


def _resize_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return resize_reference(np.asarray(v), c.attrs).astype(np.int8)


def _slice_params(c: S8Call) -> dict[str, Any]:
    return strided_slice_params(c.shapes, c.out_shape, c.attrs)


def _slice_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    v = x[0]
    assert v is not None
    return strided_slice_reference(np.asarray(v), c.attrs).astype(np.int8)


OPS = {
    "transpose": S8Op("tvmk_transpose_params", _transpose_params, _transpose_ref,
                      ("int8", "int8")),
    "resize_nearest": S8Op("tvmk_resize_nearest_params", _resize_params, _resize_ref,
                           ("int8", "int8")),
    "strided_slice": S8Op("tvmk_strided_slice_params", _slice_params, _slice_ref,
                          ("int8", "int8")),
}
