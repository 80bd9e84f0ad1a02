"""The measured code bytes of tvmdev's kernels and executor per CPU
(runtime/kernels/code_bytes.yaml, schema ``code_bytes``; scripts/measure_code_bytes.py
writes it from real builds), for the code estimate of ``tvmdev aot``'s memory report."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..errors import TvmdevError
from ..resources import runtime_dir
from . import yamlio
from .schema import validate


@dataclass(frozen=True)
class CodeBytes:
    """One CPU's measurements."""

    cpu: str
    measured_from: tuple[str, ...]  # the builds' models
    executor_base: int  # the executor's bytes: base + per_call x kernel calls
    executor_per_call: int
    kernels: dict[str, tuple[str, ...]]  # kernel entry -> the functions it reaches
    functions: dict[str, int]  # function -> its bytes


@cache
def load_code_bytes() -> dict[str, CodeBytes]:
    """Every CPU's measurements, by CPU (``cortex-m4``)."""
    path = runtime_dir() / "kernels" / "code_bytes.yaml"
    doc = yamlio.load(path)
    validate(doc, "code_bytes", str(path))
    out = {}
    for cpu, c in doc.items():
        missing = sorted({f for fs in c["kernels"].values() for f in fs} - set(c["functions"]))
        if missing:
            raise TvmdevError(f"{cpu}: kernels reach functions with no size: "
                              f"{', '.join(missing)}", str(path),
                              hint="regenerate it: python scripts/measure_code_bytes.py")
        out[str(cpu)] = CodeBytes(str(cpu), tuple(c["measured_from"]),
                                  int(c["executor"]["base"]), int(c["executor"]["per_call"]),
                                  {str(k): tuple(v) for k, v in c["kernels"].items()},
                                  {str(k): int(v) for k, v in c["functions"].items()})
    return out
