"""The firmware's linker script: the board's regions, and a section in each region the
plan put a pool in (:mod:`tvmdev.plan.memory_map`).

The program keeps its two regions (``CODE``: .text, .rodata, the load image of .data;
``RAM``: .data, .bss, the stack). Every other region the plan uses gets, before the
catch-all sections so that its input sections land there:

* a read-write region: ``.<region>.data`` (loaded in CODE, copied at startup) and
  ``.<region>.bss`` (zeroed at startup), holding the executor's workspace
  (``.bss.noinit.tvm``) when the workspace is there, and any ``.data.<region>*`` /
  ``.bss.<region>*`` input section;
* a code or flash region: ``.<region>.rodata`` with the executor's constants
  (``.rodata.tvm``) and any ``.rodata.<region>*``.

Firmware on an RTOS kernel (``--rtos``) also gets the kernel's memory in output sections
of its own in RAM (``.heap``: the kernel's heap, from which it takes the threads' stacks
and its objects; ``.stacks``: its own threads' stacks), named by the kernel's data
(``sections:`` of platforms/cmsis/rtos/<kernel>.yaml) and zeroed at startup like .bss.

The startup code (runtime/cortex_m/startup.c) walks ``__copy_table_start__`` and
``__zero_table_start__``, which list those sections.
"""

from __future__ import annotations

from typing import Any

from ..load.board import Memory, Region
from ..load.rtos import KernelSection
from ..plan.memory_map import MemoryMap
from .engine import render

# The input sections of the executor's pools (templates/executor.c.j2's default sections).
POOL_SECTIONS = {"workspace": "*(.bss.noinit.tvm)", "constants": "*(.rodata.tvm)",
                 # the firmware harness's (templates/harness/firmware/main.c.j2)
                 "inputs": "*(.rodata.tvm_inputs)", "outputs": "*(.bss.tvm_outputs)"}
_ATTRS = {"code": "rwx", "ram": "rw", "flash": "rx"}


def _memories(mem: Memory, used: set[str]) -> list[dict[str, Any]]:
    """The MEMORY lines: the program's CODE and RAM, then each other region in use."""
    def line(r: Region, label: str, attrs: str) -> dict[str, Any]:
        return {"label": label, "attrs": attrs, "origin": f"{r.origin:#010x}",
                "length": f"{r.length:#x}", "note": r.name if label != r.name.upper() else ""}
    return [line(mem.code, "CODE", "rx"), line(mem.ram, "RAM", "rwx"),
            *(line(r, r.name.upper(), _ATTRS[r.kind]) for r in mem.extra if r.name in used)]


def _sections(regions: MemoryMap) -> tuple[list[dict[str, Any]], list[dict[str, str]],
                                            list[dict[str, str]]]:
    """The sections of the regions other than the program's, and the startup tables."""
    mem = regions.memory
    own = {mem.code.name, mem.ram.name}
    sections: list[dict[str, Any]] = []
    copies: list[dict[str, str]] = []
    zeros: list[dict[str, str]] = []
    for r in mem.extra:
        pools = [p.pool.name for p in regions.placed if p.region == r]
        if r.name in own or not pools:
            continue
        label, n = r.name.upper(), r.name
        named = [POOL_SECTIONS[p] for p in pools if p in POOL_SECTIONS]
        if r.kind == "ram":
            data = {"name": f".{n}.data", "what": f"{n}: initialized data, copied at startup",
                    "noload": False, "align": 4, "start": f"__{n}_data_start__",
                    "end": f"__{n}_data_end__", "patterns": [f"*(.data.{n} .data.{n}.*)"],
                    "region": label, "load": "CODE", "load_symbol": f"__{n}_data_load__"}
            bss = {"name": f".{n}.bss", "what": f"{n}: {', '.join(pools)}; zeroed at startup",
                   "noload": True, "align": 16, "start": f"__{n}_bss_start__",
                   "end": f"__{n}_bss_end__", "patterns": [*named, f"*(.bss.{n} .bss.{n}.*)"],
                   "region": label, "load": None, "load_symbol": None}
            sections += [data, bss]
            copies.append({"load": f"__{n}_data_load__", "start": f"__{n}_data_start__",
                           "end": f"__{n}_data_end__"})
            zeros.append({"start": f"__{n}_bss_start__", "end": f"__{n}_bss_end__"})
        else:
            sections.append({"name": f".{n}.rodata", "what": f"{n}: {', '.join(pools)}",
                             "noload": False, "align": 16, "start": None, "end": None,
                             "patterns": [*named, f"*(.rodata.{n} .rodata.{n}.*)"],
                             "region": label, "load": None, "load_symbol": None})
    return sections, copies, zeros


def _kernel_sections(kernel: tuple[KernelSection, ...], heap: int
                     ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The kernel's output sections in RAM, and their rows of the zero table."""
    sections: list[dict[str, Any]] = []
    zeros: list[dict[str, str]] = []
    for k in kernel:
        start, end = f"__rtos_{k.name}_start__", f"__rtos_{k.name}_end__"
        sections.append({"name": f".{k.name}", "what": f"{k.what}: {k.size(heap):,} bytes",
                         "noload": True, "align": 8, "start": start, "end": end,
                         "patterns": list(k.inputs), "region": "RAM",
                         "load": None, "load_symbol": None})
        zeros.append({"start": start, "end": end})
    return sections, zeros


def linker_script(mem: Memory, regions: MemoryMap | None, board: str, banner: str,
                  kernel: tuple[KernelSection, ...] = (), heap: int = 0) -> str:
    """``link.ld`` of a firmware build; ``kernel``: an RTOS kernel's memory sections, with
    its heap of ``heap`` bytes."""
    sections, copies, zeros = _sections(regions) if regions is not None else ([], [], [])
    used = {s["region"].lower() for s in sections}
    ksections, kzeros = _kernel_sections(kernel, heap)
    sections += ksections
    zeros += kzeros
    return render("harness/firmware/link.ld.j2", banner=banner, board=board,
                  code_name=mem.code.name, ram_name=mem.ram.name,
                  memories=_memories(mem, used), sections=sections, copies=copies,
                  zeros=zeros, stack_size=hex(mem.stack))
