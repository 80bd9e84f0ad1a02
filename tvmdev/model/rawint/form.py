"""What a raw-integer operator's form is made of (:class:`IntOp`): its kernels' params
struct, the params, the numpy reference, and which dtypes it takes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..quant import Quant
from ..s8.call import S8Call
from ..shapes import ShapeError

# The raw integer dtypes, with their C types and numpy names.
RAW_DTYPES = ("int8", "int16", "int32", "uint32", "uint64")
RAW_CTYPES = {"int16": "int16_t", "uint32": "uint32_t", "uint64": "uint64_t"}
RAW_SIZES = {"int16": 2, "uint32": 4, "uint64": 8}

# The output of an op from its call and inputs. An op with a state argument (OpDef.states:
# the noise estimate's) has one, and outputs its new value: evaluate writes it back there.
Reference = Callable[[S8Call, list[np.ndarray | None]], np.ndarray]


@dataclass(frozen=True)
class IntOp:
    """The raw-integer form of one op."""

    params_struct: str
    params: Callable[[S8Call], dict[str, Any]]
    reference: Reference
    # The dtypes each input may have ("int32|uint32": either; the last repeated for a
    # variadic op), then the output's.
    dtypes: tuple[str, ...]
    always: bool = False  # the op has no other form (a signal op, a cast)


def is_raw(entry: IntOp | None, dtypes: Sequence[str | None],
           quants: Sequence[Quant | None]) -> bool:
    """Whether an operator with this form (None: it has none) takes its raw-integer form:
    always for some ops, else when every tensor is an integer without quantization."""
    if entry is None:
        return False
    if entry.always:
        return True
    given = [d for d in dtypes if d is not None]
    return (all(d in RAW_DTYPES for d in given) and "int8" not in given
            and all(q is None for q in quants))


def check_dtypes(op: str, entry: IntOp, call: S8Call) -> None:
    """Each tensor has a dtype the op's kernels take (:attr:`IntOp.dtypes`)."""
    want_in, want_out = entry.dtypes[:-1], entry.dtypes[-1]
    for i, dt in enumerate(call.dtypes[:-1]):
        want = want_in[min(i, len(want_in) - 1)]
        if dt is not None and dt not in want.split("|"):
            raise ShapeError(f"{op} on raw integers: input {i} is {dt}; its kernels take "
                             f"{want.replace('|', ' or ')}")
    if call.dtypes[-1] not in want_out.split("|"):
        raise ShapeError(f"{op} on raw integers: the output is {call.dtypes[-1]}; its "
                         f"kernels write {want_out.replace('|', ' or ')}")
    if any(q is not None for q in call.quants):
        raise ShapeError(f"{op} on raw integers takes tensors without quantization")


def arg(x: list[np.ndarray | None], i: int) -> np.ndarray:
    """Input ``i``, which must be given."""
    v = x[i]
    assert v is not None
    return np.asarray(v)
