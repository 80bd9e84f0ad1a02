"""int16 AVERAGE_POOL_2D and MAX_POOL_2D, NHWC, as TFLM's reference_integer_ops compute
int16: the int8 forms' arithmetic (padding left out, the average rounded half away from
zero, the input and output quantized alike) with int16's range and activation clamp.
Params are the int8 forms' ``tvmk_pool2d_s8_params``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..s8 import pool as s8pool
from ..s8.call import S8Call, S8Op, activation_range, per_tensor, quant_of, refusing

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    act = c.attrs.get("activation", "NONE")
    p = s8pool.params(c.shapes, c.out_shape, c.attrs, "NONE", quant_of(c, 0, "the input"),
                      quant_of(c, -1, "the output"))
    so, zo = per_tensor(c.out_quant, "the output")
    lo, hi = activation_range(act, so, zo, I16_MIN, I16_MAX)
    return {**p, "act_min": lo, "act_max": hi}


def _input(c: S8Call, x: list[np.ndarray | None], p: dict[str, Any]) -> np.ndarray:
    assert x[0] is not None
    return np.asarray(x[0], np.int64).reshape(p["N"], p["H"], p["W"], p["C"])


def _avg_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _params(c)
    y = np.zeros((p["N"], p["OH"], p["OW"], p["C"]), np.int64)
    for oy, ox, win in s8pool.windows(_input(c, x, p), p):
        count = win.shape[1] * win.shape[2]
        if count == 0:
            raise ValueError("a pooling window lies wholly in the padding")
        acc = win.sum(axis=(1, 2))
        y[:, oy, ox, :] = np.sign(acc) * ((np.abs(acc) + count // 2) // count)
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int16).reshape(c.out_shape)


def _max_ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    p = _params(c)
    y = np.full((p["N"], p["OH"], p["OW"], p["C"]), I16_MIN, np.int64)
    for oy, ox, win in s8pool.windows(_input(c, x, p), p):
        if win.size:
            y[:, oy, ox, :] = win.max(axis=(1, 2))
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int16).reshape(c.out_shape)


OPS = {
    "avgpool2d": S8Op("tvmk_pool2d_s8_params", _params, _avg_ref, ("int16", "int16"),
                      scratch=True),
    "maxpool2d": S8Op("tvmk_pool2d_s8_params", _params, _max_ref, ("int16", "int16"),
                      scratch=True),
}
