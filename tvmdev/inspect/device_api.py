"""The device API an ELF holds for each device kind: each ``TVMDevice<Kind><Fn>``
function defined, removed by the linker because nothing calls it (:mod:`.linkmap`),
referenced only, or missing. Only the last two are findings."""

from __future__ import annotations

from ..model.cnames import DEVICE_FUNCTIONS
from ..naming import camel

DEFINED = "defined"
REMOVED = "removed by the linker"


# What a kind with memory of its own adds (docs/device-memory.md).
MEMORY_FUNCTIONS = ("CopyTo", "CopyFrom", "Wait")


def device_states(kind: str, defined: set[str], removed: frozenset[str],
                  referenced: set[str], memory: bool = False) -> dict[str, str]:
    """The state of each of the six functions of ``kind`` (nine with ``memory``), given
    the functions the ELF defines, those the linker removed and every name its symbol
    table holds."""
    out = {}
    for fn in (*DEVICE_FUNCTIONS, *(MEMORY_FUNCTIONS if memory else ())):
        name = f"TVMDevice{camel(kind)}{fn}"
        out[fn] = (DEFINED if name in defined else REMOVED if name in removed else
                   "referenced only" if name in referenced else "missing")
    return out


def is_missing(state: str) -> bool:
    """Whether a function in ``state`` is a finding: neither in the ELF nor removed
    from it by the linker as never called."""
    return state not in (DEFINED, REMOVED)


def device_api_line(kind: str, states: dict[str, str]) -> str:
    """One line for people: every function defined, or what is missing; and which ones
    the linker removed."""
    bad = [f"{fn} ({st})" for fn, st in states.items() if is_missing(st)]
    gone = [fn for fn, st in states.items() if st == REMOVED]
    why = f"{', '.join(gone)} {REMOVED}: never called" if gone else ""
    if bad:
        return f"device API {kind}: MISSING {', '.join(bad)}" + (f"; {why}" if why else "")
    count = "six" if len(states) == len(DEVICE_FUNCTIONS) else "nine"
    return f"device API {kind}: all {count} functions defined" + (f" ({why})" if why else "")
