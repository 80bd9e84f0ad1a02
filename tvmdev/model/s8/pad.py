"""int8 PAD and PADV2, as TFLM's pad_common Prepare and reference_ops::Pad compute them:
the input's values are copied unchanged (no requantization: the output shares the
input's quantization) and every padded position holds the output's zero point (PAD), or
PADV2's constant value, an int8 quantized as the output (TFLM checks both). Params are
``tvmk_pad_s8_params`` (``tvmk_s8_ops.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..quant import Quant
from ..regions import pad_params
from ..shapes import Shape
from .call import S8Call, S8Op, quant_of, refusing
from .elementwise import scalar


def params(shapes: list[Shape | None], out: Shape, pads: tuple[int, ...], qout: Quant,
           value: int | None = None, qvalue: Quant | None = None) -> dict[str, Any]:
    """``tvmk_pad_s8_params``: ``pads`` as the op table takes them (all begins, then all
    ends); ``value`` is PADV2's int8 constant (``qvalue`` its quantization), else the pad
    value is the output's zero point."""
    _, zo = scalar(qout, "the output")
    if value is None:
        fill = zo
    else:
        if qvalue is None or scalar(qvalue, "the constant") != scalar(qout, "the output"):
            raise ValueError("PADV2's constant value must be quantized as the output "
                             "(TFLM refuses otherwise)")
        fill = int(value)
    if not -128 <= fill <= 127:
        raise ValueError(f"the int8 pad value {fill} is out of range")
    base = pad_params(shapes, out, {"pads": pads, "value": 0.0})
    return {**base, "value": fill}


def reference(x: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """int8 constant padding of ``x`` with ``params``' values."""
    nd = p["ndim"]
    widths = [(p["begin"][d], p["out_shape"][d] - p["in_shape"][d] - p["begin"][d])
              for d in range(nd)]
    return np.pad(x, widths, constant_values=np.int8(p["value"])).astype(np.int8)


@refusing
def _params(c: S8Call) -> dict[str, Any]:
    """The op table's ``value`` is a real number: quantized as the output (round half away
    from zero, in float32, as TFLite quantizes), it is the int8 fill (PAD's 0.0: the
    output's zero point)."""
    qout = quant_of(c, -1, "the output")
    scale, zp = scalar(qout, "the output")
    value = float(c.attrs.get("value", 0.0))
    ratio = float(np.float32(value) / np.float32(scale))
    fill = zp + int(np.sign(ratio) * np.floor(abs(ratio) + 0.5))
    return params(c.shapes, c.out_shape, tuple(c.attrs["pads"]), qout, fill, qout)


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    assert x[0] is not None
    return reference(np.asarray(x[0]), _params(c))


OPS = {"pad": S8Op("tvmk_pad_s8_params", _params, _ref, ("int8", "int8"))}
