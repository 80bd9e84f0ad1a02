"""The 256-entry table of sigmoid(i / 24) in 0.16 fixed point that TFLM's int16 logistic
and tanh (and CMSIS-NN's ``arm_nn_activation_s16``) interpolate. Its entries are tuned,
not a plain rounding of the function (44 of them differ from one), so tvmdev does not
recompute it and does not ship a copy: it reads it from the third-party tree that
defines it, TFLM's (``TFLM_SOURCE_DIR``) or CMSIS-NN's (``CMSIS_NN_SOURCE_DIR``), and a
model that needs it is refused in one line without either."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from ..shapes import ShapeError

# Where each tree defines the table.
SOURCES = (("TFLM_SOURCE_DIR", "tensorflow/lite/kernels/internal/common.h"),
           ("CMSIS_NN_SOURCE_DIR", "Source/NNSupportFunctions/arm_nntables.c"))
_DEFINITION = re.compile(r"sigmoid_table_uint16\[256\]\s*=\s*\{([^}]*)\}")


def _read(path: Path) -> tuple[int, ...] | None:
    try:
        found = _DEFINITION.search(path.read_text(errors="replace"))
    except OSError:
        return None
    if found is None:
        return None
    values = tuple(int(v) for v in re.findall(r"\d+", found.group(1)))
    ok = len(values) == 256 and values[0] == 1 << 15 and all(
        a <= b < 1 << 16 for a, b in zip(values, values[1:], strict=False))
    return values if ok else None


@functools.cache
def sigmoid_table() -> tuple[int, ...]:
    """The table, from the first tree that defines it; ShapeError without one."""
    for var, rel in SOURCES:
        root = os.environ.get(var)
        if root:
            values = _read(Path(root) / rel)
            if values is not None:
                return values
    raise ShapeError("the int8 lstm needs TFLM's int16 sigmoid table, read from TFLM's "
                     "tree (set TFLM_SOURCE_DIR) or CMSIS-NN's (CMSIS_NN_SOURCE_DIR)")
