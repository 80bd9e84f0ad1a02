"""Values C can hold: what the generated code stores in float, int32_t and arrays.

The kernels' params structs are int32_t and float (``tvmk_portable.h``); a tensor, a
constant or the workspace is one C object, and on a 32-bit target (the Cortex-M boards)
no object may exceed PTRDIFF_MAX. Each check returns what is wrong, or None; the caller
names the tensor or operator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import shown

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_OBJECT_BYTES = 2**31 - 1  # PTRDIFF_MAX of a 32-bit target


def float32(value: float) -> float | None:
    """``value`` as the float32 C will hold (0.0 for what underflows), or None when it
    is not finite in float32 (1e39 is a finite double, not a finite float)."""
    try:
        with np.errstate(over="ignore"):
            f = np.float32(value)
    except OverflowError:  # an int too large for a double
        return None
    return float(f) if np.isfinite(f) else None


def int32_problem(value: Any) -> str | None:
    """Why an integer (or list of integers) does not fit int32_t, or None."""
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if isinstance(v, int) and not isinstance(v, bool) and not INT32_MIN <= v <= INT32_MAX:
            return f"{shown(v)} does not fit int32_t"
    return None


def params_problem(params: dict[str, Any]) -> str | None:
    """The first field of a kernel params struct C cannot hold, or None."""
    for key, value in params.items():
        if hasattr(value, "ctype"):  # an array (s8.call.CArray): its values; a state: none
            value = list(getattr(value, "values", ()))
        if isinstance(value, float):
            if float32(value) is None:
                return f"param {key} = {shown(value)} is not a finite float"
        else:
            why = int32_problem(value)
            if why is not None:
                return f"param {key} = {why}"
    return None


def object_problem(nbytes: int) -> str | None:
    """Why a C object of ``nbytes`` bytes cannot be declared on a 32-bit target, or None."""
    if nbytes > MAX_OBJECT_BYTES:
        return (f"{nbytes} bytes, more than a 32-bit target's largest object "
                f"({MAX_OBJECT_BYTES} bytes)")
    return None
