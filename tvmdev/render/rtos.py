"""The kernel glue of Cortex-M firmware on a CMSIS-RTOS2 kernel (``--rtos``): what a user
would otherwise write by hand beside the kernel's pinned trees. RTE_Components.h and a
CMSIS device header for the board's core, the kernel's configuration file
(``RTX_Config.h`` overrides or ``FreeRTOSConfig.h``) and the clock and assertion hook.
The vector table is the startup code's: its SVC, PendSV and SysTick entries are weak
symbols the kernel's handlers replace."""

from __future__ import annotations

from ..load.rtos import Core, CoreFiles, Rtos
from ..write.files import OutFile
from .device import style_for
from .engine import banner, render

TICK_HZ = 1000  # one tick a millisecond, on every kernel
DEFAULT_CLOCK_HZ = 25_000_000  # a board without run.clock_hz: MPS2's
DEFAULT_HEAP = 0x20000  # bytes of the kernel's object and thread-stack memory
RUN_THREAD_STACK = 2048  # the firmware harness's thread that starts the runs (main.c.j2)
KERNEL_OBJECTS = 0x4000  # the kernel's objects and its allocator's headers, beside the stacks


def kernel_heap(thread_stack: int, threads: int) -> int:
    """The kernel heap of firmware whose harness runs the model in up to ``threads``
    threads of ``thread_stack`` bytes each (the board's memory.stack): their stacks, the
    harness's own thread, and the kernel's objects, from which osThreadNew takes them."""
    return threads * thread_stack + RUN_THREAD_STACK + KERNEL_OBJECTS


def rtos_files(rtos: Rtos, core: Core, port: CoreFiles, board: str, clock_hz: int,
               command: str, heap: int = DEFAULT_HEAP) -> list[OutFile]:
    """The glue files, named as the kernel and the firmware include them; ``port`` is the
    kernel's files for the core, with the configuration its port needs."""
    config = [(k, v.format(heap=heap, tick_hz=TICK_HZ))
              for k, v in [*rtos.config.items(), *port.config]]
    fpu = dict(core.defines).get("__FPU_PRESENT", "0U") != "0U"
    ctx = {"rtos": rtos, "core": core, "board": board, "config": config, "fpu": fpu,
           "clock_hz": clock_hz}
    out = []
    for template, path in (("rtos/RTE_Components.h.j2", "RTE_Components.h"),
                           ("rtos/tvmdev_cm_device.h.j2", "tvmdev_cm_device.h"),
                           (rtos.config_template, rtos.config_path),
                           ("rtos/tvmdev_rtos_glue.c.j2", "tvmdev_rtos_glue.c")):
        out.append(OutFile(path, render(template, banner=banner(style_for(path), command,
                                                                 "owned"), **ctx), "owned"))
    return out
