"""Harnesses: the program around a generated model that a run backend builds.

* ``host``: a program reading inputs from files and writing outputs to files;
* ``firmware``: bare-metal firmware with the inputs compiled in, printing its outputs
  as float32 bit patterns on the console UART, and its linker script;
* ``zephyr``: the model's side of ``zephyr_app`` (glue, sources, overlay, Kconfig).

Each function returns files relative to the build folder; nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..load.board import Board
from ..load.rtos import load_rtos
from ..model.cnames import Names
from ..model.graph import Model
from ..model.ops import CTYPES
from ..naming import camel
from ..plan.devices import DevicePlan
from ..plan.memory_map import MemoryMap
from ..resources import runtime_dir
from ..write.files import OutFile
from .cvalues import c_bits, c_decimals
from .engine import banner, render
from .linker import linker_script
from .rtos import kernel_heap

# Threads the host harness runs at most (--threads).
MAX_THREADS = 4
MEM_DRIVERS = 2  # in-memory SPI and I2C drivers of the firmware, of each
# The calls of your devices the RTOS firmware counts per thread: (function, counter, whether
# a failed call counts too).
COUNTED_CALLS = (("Activate", "CALL_ACTIVATE", 0), ("Deactivate", "CALL_DEACTIVATE", 1),
                 ("Open", "CALL_OPEN", 0), ("Close", "CALL_CLOSE", 1))


@dataclass(frozen=True)
class Harness:
    """What every harness template is given: the model, its devices and tensors."""

    model: Model
    board: Board
    devices: DevicePlan
    inputs: dict[str, np.ndarray]
    command: str
    icount: bool = False  # firmware: count the run's instructions (tvmdev run --instructions)
    # firmware: the operators' trace calls the counter records (tvmdev run --per-operator)
    icount_ops: int = 0
    # firmware: each device kind's CMSIS-Driver (usart, spi, i2c), as it was generated
    drivers: dict[str, str] = field(default_factory=dict)
    # simulated devices with memory of their own: (bytes, alignment) by kind
    memory: dict[str, tuple[int, int]] = field(default_factory=dict)
    regions: MemoryMap | None = None  # firmware: each pool's region (the linker script)
    workspace_io: bool = False  # the model's inputs and outputs are in its workspace

    def context(self, embed_inputs: bool) -> dict[str, Any]:
        """The template context; ``embed_inputs`` compiles the inputs in (firmware)."""
        m = self.model
        names = Names(m.name)
        sim = set(self.devices.sim_kinds)
        # Built-in KleidiAI devices keep counters (tvmdev_kai_stats) the harness prints.
        kai = {k.kind for k in self.devices.with_origin("builtin") if k.platform == "kleidiai"}
        return {
            "model": m.name, "prefix": names.prefix, "macro": names.macro,
            "max_threads": MAX_THREADS,
            "states": bool(m.states),
            "board": self.board.name,
            "icount": self.icount,
            "icount_ops": self.icount_ops if self.icount and self.board.rtos is None else 0,
            "workspace_io": self.workspace_io,
            "rtos": self.board.rtos,
            "kinds": [{"kind": k.kind, "platform": k.platform} for k in self.devices.kinds],
            "sim": bool(sim),
            "counted": [{"camel": camel(k), "type": f"tvm_device_{k}_t",
                         "wrapped": COUNTED_CALLS} for k in self.counted_kinds()],
            "memory": any(d.kind in sim and d.kind in self.memory for d in m.devices),
            "int_outputs": [{"dtype": d, "ctype": CTYPES[d], "put": _PUT[d]} for d in sorted(
                {m.tensors[n].dtype for n in m.outputs} - {"float32"})],
            "float_outputs": any(m.tensors[n].dtype == "float32" for n in m.outputs),
            "inputs": [{"name": n, "cname": m.tensors[n].cname,
                        "ctype": CTYPES[m.tensors[n].dtype],
                        "var": names.harness("in", m.tensors[n].cname),
                        "shape": list(m.tensors[n].shape),
                        "count": int(np.prod(m.tensors[n].shape)),
                        "data": _input_data(self.inputs[n], m.tensors[n].dtype)
                        if embed_inputs else ""}
                       for n in m.inputs],
            "outputs": [{"name": n, "cname": m.tensors[n].cname,
                         "ctype": CTYPES[m.tensors[n].dtype],
                         "var": names.harness("out", m.tensors[n].cname),
                         "expect_var": names.harness("expect", m.tensors[n].cname),
                         "put": _PUT[m.tensors[n].dtype],
                         "count": int(np.prod(m.tensors[n].shape))} for n in m.outputs],
            "devices": [{"name": d.name, "kind": d.kind, "dashed": d.kind.replace("_", "-"),
                         "var": names.harness("dev", d.name),
                         "sim_var": names.harness("sim", d.name),
                         "type": f"tvm_device_{d.kind}_t", "sim": d.kind in sim,
                         "kai_stats": d.kind in kai,
                         "memory": ({"var": names.harness("mem", d.name),
                                     "size": self.memory[d.kind][0],
                                     "align": max(16, self.memory[d.kind][1])}
                                    if d.kind in sim and d.kind in self.memory else None),
                         "camel": camel(d.kind)} for d in m.devices],
        }

    def counted_kinds(self) -> list[str]:
        """The device kinds of your own (not simulated) whose calls the RTOS firmware
        counts per thread, through the linker's --wrap (:data:`COUNTED_CALLS`)."""
        if self.board.rtos is None or self.devices.sim_kinds:
            return []
        return sorted({d.kind for d in self.model.devices})

    def c_banner(self) -> str:
        """The banner of a generated C file of this harness."""
        return banner("c", self.command, "owned")


# The firmware's printer of each output dtype (an integer as its int32's bit pattern).
# The firmware prints an integer output value by value as the 32-bit pattern of its int32
# value: raw uint32 ones keep their bits; 64-bit ones keep their low half only, which
# the comparison with the reference then shows.
_PUT = {"float32": "put_floats", "int8": "put_int8s", "int16": "put_int16s",
        "int32": "put_int32s", "uint32": "put_uint32s", "int64": "put_int64s",
        "uint64": "put_uint64s"}


def _input_data(values: np.ndarray, dtype: str) -> str:
    """An input compiled in: float32 bit patterns, or decimal integers."""
    if dtype == "float32":
        return c_bits(values)
    return c_decimals([int(v) for v in np.ravel(values)])


def host_files(h: Harness) -> list[OutFile]:
    """``main.c`` of the host program."""
    return [OutFile("main.c", render("harness/host/main.c.j2", banner=h.c_banner(),
                                     **h.context(embed_inputs=False)), "owned")]


def firmware_files(h: Harness) -> list[OutFile]:
    """``main.c`` of the firmware (inputs compiled in) and its linker script."""
    board = h.board
    ctx = h.context(embed_inputs=True)
    accel = board.support.accelerator_uarts
    if not accel or board.memory is None:
        raise TvmdevError(f"board {board.name} names no accelerator_uarts or memory",
                          board.where)
    # Each device gets the CMSIS-Driver it was generated for: a UART of the board, or an
    # in-memory SPI or I2C driver (runtime/cortex_m/mem_drivers.c), two of each.
    used = {"usart": 0, "spi": 0, "i2c": 0}
    for dev in ctx["devices"]:
        driver = h.drivers.get(dev["kind"], "usart")
        n = used[driver]
        used[driver] += 1
        if driver != "usart" and n >= MEM_DRIVERS:
            raise TvmdevError(f"the firmware has {MEM_DRIVERS} in-memory {driver.upper()} "
                              f"drivers: device {dev['name']} is one too many", board.where)
        dev["uart"] = accel[n % len(accel)] if driver == "usart" else None
        dev["driver"] = (f"Driver_USART{dev['uart']}" if driver == "usart"
                         else f"Driver_{driver.upper()}{n}")
    ctx["drivers"] = sorted({d["driver"] for d in ctx["devices"] if d["uart"] is None})
    ctx["thread_stack"] = board.memory.stack  # the run thread's, on an RTOS
    console = board.support.console_uart
    ctx["console_uart"] = console
    ctx["uarts"] = sorted({console, *(int(d["uart"]) for d in ctx["devices"]
                                      if d["uart"] is not None)})
    kernel = load_rtos(board.rtos).sections if board.rtos is not None else ()
    link = linker_script(board.memory, h.regions, board.name,
                         banner("c", f"tvmdev run --board {board.name}", "owned"),
                         kernel, kernel_heap(board.memory.stack, MAX_THREADS))
    return [OutFile("link.ld", link, "owned"),
            OutFile("main.c", render("harness/firmware/main.c.j2", banner=h.c_banner(),
                                     **ctx), "owned")]


def zephyr_files(h: Harness, expected: dict[str, np.ndarray],
                 tolerances: dict[str, tuple[float, float]], sources: list[Path],
                 includes: list[Path], defines: list[str]) -> list[OutFile]:
    """The run's side of zephyr_app (the model's is the model folder's
    tvmgen_<model>.cmake): glue with the expected outputs and each one's (atol, rtol) (0, 0:
    bit-exact), the sources list of the glue and the devices (with their include folders
    and macros), the devicetree overlay and the Kconfig fragment."""
    if h.workspace_io:
        raise TvmdevError(f"model '{h.model.name}': the Zephyr app passes its own input and "
                          "output buffers", h.model.path, hint="--io caller")
    ints = [n for n in (*h.model.inputs, *h.model.outputs)
            if h.model.tensors[n].dtype != "float32"]
    if ints:
        raise TvmdevError(f"model '{h.model.name}': the Zephyr app takes float32 inputs and "
                          f"outputs; '{ints[0]}' is {h.model.tensors[ints[0]].dtype}",
                          h.model.path, hint="run it on a bare-metal board or the host")
    ctx = h.context(embed_inputs=True)
    # Each run thread's stack: the board's stack for a run, else Zephyr's main's default.
    ctx["thread_stack"] = h.board.memory.stack if h.board.memory is not None else 4096
    for t in ctx["outputs"]:
        t["expect"] = c_bits(expected[t["name"]])
        t["atol"], t["rtol"] = (repr(float(v)) for v in tolerances[t["name"]])
    command = f"{h.command} --board {h.board.name}"
    c_banner = banner("c", command, "owned")
    return [
        OutFile("app/tvmdev_app.h", render("harness/zephyr/tvmdev_app.h.j2",
                                           banner=c_banner, **ctx), "owned"),
        OutFile("app/tvmdev_app.c", render("harness/zephyr/tvmdev_app.c.j2",
                                           banner=c_banner, **ctx), "owned"),
        OutFile("app/tvmdev_app.cmake", render(
            "harness/zephyr/tvmdev_app.cmake.j2", banner=banner("hash", command, "owned"),
            model=h.model.name, sources=[str(p) for p in sources],
            includes=[str(p) for p in includes], defines=defines,
            module_includes=[str(runtime_dir() / "sim")] if h.devices.sim_kinds else []),
            "owned"),
        OutFile("app.overlay", render("harness/zephyr/overlay.dts.j2", banner=c_banner,
                                      model=h.model.name, devices=ctx["devices"]), "owned"),
        OutFile("tvmdev.conf", banner("hash", command, "owned") + "\n" + "".join(
            f"CONFIG_TVM_DEVICE_{k['kind'].upper()}=y\n" for k in ctx["kinds"]), "owned"),
    ]
