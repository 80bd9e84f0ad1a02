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
from typing import TYPE_CHECKING

from ..load.code_bytes import load_code_bytes
from ..model.s8.call import CArray

if TYPE_CHECKING:  # (the pipeline's fit asks for an estimate before a Compiled exists)
    from .pipeline import Compiled
    from .prepare import Prepared

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
    return ops_params_bytes(c.ops)


def ops_params_bytes(ops: tuple[Prepared, ...]) -> int:
    """The bytes of the per-channel params arrays the executor emits for ``ops``, each
    distinct array once (the executor emits an array with the same values once)."""
    seen = {(v.ctype, tuple(v.values)) for p in ops if p.view_of is None
            for v in p.params.values() if isinstance(v, CArray)}
    return sum(_CTYPE_BYTES.get(ctype, 4) * len(values) for ctype, values in seen)


def estimate_code(c: Compiled) -> CodeEstimate | None:
    """The code estimate for ``c``'s board's CPU, or None when it was never measured."""
    return estimate(c.board.cpu, sum(1 for p in c.ops if p.view_of is None),
                    [k.name for k in c.kernels])


def estimate(cpu: str, calls: int, kernels: list[str]) -> CodeEstimate | None:
    """The code of an executor making ``calls`` kernel calls to ``kernels`` on ``cpu``,
    or None when that CPU was never measured."""
    data = load_code_bytes().get(cpu)
    if data is None:
        return None
    reached: set[str] = set()
    unmeasured = []
    for k in kernels:
        funcs = data.kernels.get(k)
        if funcs is None:
            unmeasured.append(k)
        else:
            reached.update(funcs)
    return CodeEstimate(data.cpu, data.executor_base + data.executor_per_call * calls,
                        sum(data.functions[f] for f in reached), tuple(sorted(unmeasured)),
                        data.measured_from)
