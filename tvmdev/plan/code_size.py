"""The flash a compiled model's code and params take, estimated before anything is built,
for ``tvmdev aot``'s memory report (issue 24):

* params: the per-channel arrays beside the params structs (multipliers, shifts, packed
  filters: :class:`~tvmdev.model.s8.call.CArray`), exactly, from the prepared operators;
* code: the executor (``base + per_call x`` the operators that call a kernel) and every
  function the selected kernels reach, each counted once, from the sizes measured on
  real builds for the board's CPU (runtime/kernels/code_bytes.yaml,
  :mod:`tvmdev.load.code_bytes`). A kernel never measured on that CPU is listed, not
  guessed; a CPU never measured has no estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..load.code_bytes import load_code_bytes
from ..model.s8.call import CArray
from .pipeline import Compiled

_CTYPE_BYTES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                "uint32_t": 4, "float": 4}


@dataclass(frozen=True)
class CodeEstimate:
    """The code estimate and what it is made of."""

    cpu: str
    executor: int
    kernels: int
    unmeasured: tuple[str, ...]  # selected kernels with no size for this CPU
    measured_from: tuple[str, ...]

    @property
    def total(self) -> int:
        """Executor and kernels."""
        return self.executor + self.kernels


def params_bytes(c: Compiled) -> int:
    """The bytes of the per-channel params arrays the executor emits."""
    return sum(_CTYPE_BYTES.get(v.ctype, 4) * len(v.values)
               for p in c.ops if p.view_of is None
               for v in p.params.values() if isinstance(v, CArray))


def estimate_code(c: Compiled) -> CodeEstimate | None:
    """The code estimate for ``c``'s board's CPU, or None when it was never measured."""
    data = load_code_bytes().get(c.board.cpu)
    if data is None:
        return None
    calls = sum(1 for p in c.ops if p.view_of is None)
    reached: set[str] = set()
    unmeasured = []
    for k in c.kernels:
        funcs = data.kernels.get(k.name)
        if funcs is None:
            unmeasured.append(k.name)
        else:
            reached.update(funcs)
    return CodeEstimate(data.cpu, data.executor_base + data.executor_per_call * calls,
                        sum(data.functions[f] for f in reached), tuple(sorted(unmeasured)),
                        data.measured_from)
