"""CMSIS-RTOS2 kernels of tvmdev's Cortex-M firmware (``--rtos rtx5``, ``--rtos freertos``):
what each is built from, as data (``platforms/cmsis/rtos/<name>.yaml``, schema ``rtos``),
and the core facts a CMSIS device header states (``platforms/cmsis/rtos/cores.yaml``,
schema ``rtos_cores``).

A kernel's trees are pinned third-party trees like CMSIS-NN's (:mod:`.tree`): found from
their environment variables, checked against their pins, never copied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import TvmdevError
from ..resources import platforms_dir
from . import yamlio
from .schema import validate
from .tree import Tree, load_tree, locate


@dataclass(frozen=True)
class CoreFiles:
    """A kernel's files for one core (RTX5's exception entry, FreeRTOS's port)."""

    tree: str
    include: tuple[str, ...]
    files: tuple[str, ...]
    config: tuple[tuple[str, str], ...] = ()  # the port's configuration macros


@dataclass(frozen=True)
class KernelSection:
    """Kernel memory the firmware's linker script puts in an output section of its own."""

    name: str  # the output section is .<name>
    what: str
    inputs: tuple[str, ...]  # the linker's input-section descriptions, FILE(SECTIONS)
    bytes_expr: str  # a sum of byte counts and {heap}

    def size(self, heap: int) -> int:
        """Its bytes with a kernel heap of ``heap`` bytes."""
        return sum(int(t.strip().format(heap=heap)) for t in self.bytes_expr.split("+"))


@dataclass(frozen=True)
class Rtos:
    """One CMSIS-RTOS2 kernel and the trees it is built from."""

    name: str
    description: str
    trees: tuple[Tree, ...]
    cores: dict[str, CoreFiles]
    defines: tuple[str, ...]
    config: dict[str, str]  # macro -> value; {heap} and {tick_hz} are the board's
    config_template: str  # the kernel configuration file tvmdev writes, and its name
    config_path: str
    rte: tuple[tuple[str, str], ...]  # RTE_Components.h macros the kernel reads
    device_options: tuple[tuple[str, str], ...]  # of the device code a run generates
    mutex_cb_type: str
    mutex_cb_header: str
    file: Path
    sections: tuple[KernelSection, ...] = ()


@dataclass(frozen=True)
class Core:
    """What a CMSIS device header states for one core."""

    cpu: str
    header: str
    defines: tuple[tuple[str, str], ...]


def rtos_dir() -> Path:
    """The folder of the kernel files."""
    return platforms_dir() / "cmsis" / "rtos"


def rtos_names() -> tuple[str, ...]:
    """The kernels tvmdev can build firmware with."""
    return tuple(sorted(p.stem for p in rtos_dir().glob("*.yaml") if p.stem != "cores"))


@cache
def load_rtos(name: str) -> Rtos:
    """The kernel called ``name``, checked."""
    if name not in rtos_names():
        raise TvmdevError(f"--rtos {name}: no such kernel",
                          hint=f"kernels: {', '.join(rtos_names())}")
    path = rtos_dir() / f"{name}.yaml"
    doc = yamlio.load(path)
    validate(doc, "rtos", str(path))
    trees = tuple(load_tree(t, str(path)) for t in doc["trees"])
    names = {t.name for t in trees}
    cores = {}
    for cpu, c in doc["cores"].items():
        if c["tree"] not in names:
            raise TvmdevError(f"cores: {cpu}: no tree '{c['tree']}' in trees:", str(path))
        cores[cpu] = CoreFiles(c["tree"], tuple(c.get("include") or ()), tuple(c["files"]),
                               tuple((str(k), str(v)) for k, v in (c.get("config") or {}).items()))
    cb = doc["mutex_cb"]
    return Rtos(doc["name"], doc["description"], trees, cores,
                tuple(doc.get("defines") or ()), dict(doc["config"]),
                doc["config_file"]["template"], doc["config_file"]["path"],
                tuple((str(k), str(v)) for k, v in (doc.get("rte") or {}).items()),
                tuple((str(k), str(v)) for k, v in doc["device_options"].items()),
                cb["type"], cb["header"], path,
                tuple(KernelSection(k["name"], k["what"], tuple(k["inputs"]), k["bytes"])
                      for k in doc.get("sections") or ()))


@cache
def load_cores() -> dict[str, Core]:
    """Every core's device-header facts."""
    path = rtos_dir() / "cores.yaml"
    doc = yamlio.load(path)
    validate(doc, "rtos_cores", str(path))
    return {cpu: Core(cpu, c["header"], tuple((k, str(v)) for k, v in c["defines"].items()))
            for cpu, c in doc.items()}


def core_of(rtos: Rtos, cpu: str) -> tuple[Core, CoreFiles]:
    """The core facts and the kernel's files for ``cpu``; refused where there are none."""
    cores = load_cores()
    if cpu not in rtos.cores or cpu not in cores:
        served = sorted(set(rtos.cores) & set(cores))
        raise TvmdevError(f"--rtos {rtos.name}: no port for {cpu}", str(rtos.file),
                          hint=f"{rtos.name} runs here on {', '.join(served)}")
    return cores[cpu], rtos.cores[cpu]


def locate_trees(rtos: Rtos) -> dict[str, Path]:
    """Each of the kernel's trees, at its pin; a missing one is an error with its hint."""
    found = {}
    for tree in rtos.trees:
        root = locate(tree, None)
        if root is None:
            pin = tree.pin
            raise TvmdevError(f"--rtos {rtos.name}: no {tree.name} tree ({tree.env} is not "
                              f"set)", hint=f"git clone --branch {pin.tag} {pin.repository} "
                                            f"and set {tree.env} to it")
        found[tree.name] = root
    return found


def missing_trees(rtos: Rtos) -> list[Tree]:
    """The kernel's trees whose environment variable is not set."""
    return [t for t in rtos.trees if not os.environ.get(t.env)]
