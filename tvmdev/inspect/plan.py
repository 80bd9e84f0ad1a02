"""The plan ``tvmdev aot`` writes beside a model (``tvmgen_<model>_plan.json``), read back
by ``tvmdev inspect --model``: checked, so that a file of another shape is one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..reading import read_json


def _named(items: Any, key: str) -> list[str] | None:
    """``[item[key] for item in items]`` when items is a list of mappings with a string
    at ``key``, else None."""
    if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get(key), str) for i in items):
        return None
    return [i[key] for i in items]


@dataclass(frozen=True)
class Plan:
    """What inspect checks an ELF against."""

    model: str
    kinds: list[str]  # device kinds
    kernels: list[str]  # selected kernels
    # The file names of the board libraries' tree sources the build compiles (plan.json
    # ``trees``: CMSIS-NN's), whose code counts as the kernels' (with the global functions
    # they define, which CMSIS-NN names arm_*).
    tree_files: set[str]
    # The kinds with memory of their own (plan.json ``pools``): they also need CopyTo,
    # CopyFrom and Wait.
    memory_kinds: frozenset[str] = frozenset()
    # plan.json's ``pools`` and ``copies``, as written: the devices' memory pools and the
    # bytes a run copies (docs/device-memory.md).
    device_memory: dict[str, Any] | None = None


def pool_lines(memory: dict[str, Any] | None) -> list[str]:
    """The device pools as ``tvmdev inspect`` prints them, one line each, as aot does."""
    if not memory:
        return []
    lines = []
    for p in memory.get("pools") or []:
        lines.append(f"device {p.get('device')}: pool {p.get('size')} of {p.get('capacity')} "
                     f"bytes (lower bound {p.get('lower_bound')}, ratio "
                     f"{float(p.get('ratio') or 0):.3f}); constants "
                     f"{(p.get('constants') or {}).get('size', 0)} bytes, loaded once")
    c = memory.get("copies") or {}
    if c:
        lines.append(f"bytes on the bus per run: {c.get('to_devices')} to the devices, "
                     f"{c.get('from_devices')} back; {c.get('constants_per_load')} of "
                     "constants per load")
    return lines


def read_plan(model_dir: Path) -> Plan:
    """The plan ``tvmdev aot`` wrote into ``model_dir`` (or ``model_dir/model``, a build
    folder)."""
    if not model_dir.is_dir():
        raise TvmdevError("no such folder" if not model_dir.exists() else "is not a folder",
                          str(model_dir), hint="pass the folder tvmdev aot wrote, or the "
                                               "build folder")
    plans = sorted(model_dir.glob("tvmgen_*_plan.json")) or sorted(
        model_dir.glob("model/tvmgen_*_plan.json"))
    if not plans:
        raise TvmdevError("no tvmgen_<model>_plan.json here", str(model_dir),
                          hint="pass the folder tvmdev aot wrote, or the build folder")
    plan = read_json(plans[0], "plan")
    kinds = _named(plan.get("devices"), "kind") if isinstance(plan, dict) else None
    kernels = _named(plan.get("kernels"), "name") if isinstance(plan, dict) else None
    model = plan.get("model") if isinstance(plan, dict) else None
    if kinds is None or kernels is None or not isinstance(model, str):
        raise TvmdevError("not a plan tvmdev aot wrote (it needs model, devices with a kind "
                          "each and kernels with a name each)", str(plans[0]),
                          hint="regenerate it with tvmdev aot")
    trees = plan.get("trees")
    tree_files = {Path(str(src)).name for t in trees or [] if isinstance(t, dict)
                  for src in t.get("sources") or []} if isinstance(trees, list) else set()
    kind_of = dict(zip(_named(plan.get("devices"), "name") or [], kinds, strict=False))
    pools = _named(plan.get("pools"), "device") or []
    memory = {k: plan[k] for k in ("pools", "copies") if k in plan} if pools else None
    return Plan(model, sorted(set(kinds)), sorted(set(kernels)), tree_files,
                frozenset(kind_of[d] for d in pools if d in kind_of), memory)
