"""Bare-metal firmware run under ``qemu-system``: the inputs are compiled in, the
outputs come back as float32 bit patterns on the console UART, and semihosting carries
the exit status out. A simulated device's failure is compiled in.

Each build also finds the worst-case stack below ``tvmgen_<model>_run``
(:mod:`tvmdev.inspect.stack`), and each run prints the stack it used; both go into the
build folder's build.json (``stack``), written through the one writer (plan.json stays as
generation wrote it). With ``Job.icount`` (``tvmdev run --instructions``)
the firmware also counts the run call's instructions and QEMU runs with -icount
(:mod:`tvmdev.run.icount`)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import TvmdevError, log_excerpt
from ..inspect.stack import analyse
from ..load.rtos import load_rtos
from ..model.cnames import Names
from ..model.graph import Model
from ..naming import camel
from ..render.buildfile import BUILD_JSON, build_json
from ..render.harness import COUNTED_CALLS, MAX_THREADS, Harness, firmware_files
from ..render.rtos import DEFAULT_CLOCK_HZ, kernel_heap
from ..resources import platforms_dir, runtime_dir
from ..write.files import OutFile, sync
from . import icount
from .backend import Backend, Job, RawRun, RunOptions, parse_output
from .compile import compile_program, object_dir
from .link import LinkedRun
from .rtos import rtos_build


def printed_outputs(model: Model, data: dict[str, list[int]], exe: Path
                    ) -> dict[str, np.ndarray]:
    """The outputs a program printed as bit patterns, checked for size."""
    outputs = {}
    for name in model.outputs:
        t = model.tensors[name]
        words = np.array(data.get(t.cname, []), dtype=np.uint32)
        if words.size != int(np.prod(t.shape)):
            raise TvmdevError(f"the firmware printed {words.size} values for output '{name}'",
                              str(exe))
        if t.dtype == "float32":
            outputs[name] = words.view(np.float32).reshape(t.shape)
        else:  # int8: each value printed as its int32's bit pattern
            outputs[name] = words.view(np.int32).astype(np.dtype(t.dtype)).reshape(t.shape)
    return outputs


def run_firmware(backend: Backend, job: Job, inputs: dict[str, np.ndarray], argv: list[str]
                 ) -> RawRun:
    """Run firmware built with its inputs compiled in, and read the status, device counts
    and outputs it printed (a run that stops before ``tvmdev: end`` is one error)."""
    if inputs is not job.inputs:
        raise TvmdevError("firmware runs on the inputs it was built with")
    proc = backend.run_program(job, argv)
    status, status_name, devices, data = parse_output(proc.stdout)
    if "tvmdev: end" not in proc.stdout:
        raise TvmdevError(f"the firmware stopped early (exit {proc.returncode})",
                          str(job.exe), log=log_excerpt(proc.stdout + proc.stderr, 25,
                                                        tail=True))
    return RawRun(proc, status, status_name, devices,
                  printed_outputs(job.model, data, job.exe))


def _record(job: Job) -> None:
    """Write the build's build.json (its stack) atomically into the build folder."""
    assert job.stack is not None
    sync(job.build_dir, [OutFile(BUILD_JSON, build_json(job.model.name, job.board.name,
                                                        job.exe.name, job.stack.to_json()),
                                 "owned")])


class QemuSystemBackend(Backend):
    method = "qemu-system"
    fault_at_run_time = False

    def exe_path(self, build_dir: Path, model: Model) -> Path:
        """The program or image a build of ``model`` in ``build_dir`` makes."""
        return build_dir / f"{model.name}.elf"

    def harness_files(self, harness: Harness, job: Job) -> list[OutFile]:
        """The harness around the model (main.c, linker script, Zephyr glue)."""
        sup = self.board.support
        job.sources += [*sup.sources, runtime_dir() / "cortex_m/mem_drivers.c"]
        job.include_dirs += [*sup.include, platforms_dir() / "cmsis/include"]
        job.defines += [f"{k}={v}" for k, v in sup.defines]
        job.link_flags += [f"-T{job.build_dir / 'link.ld'}",
                           f"-Wl,-Map={job.build_dir / (job.model.name + '.map')}"]
        if harness.icount and self.board.rtos is None:  # the counter, and SysTick's vector
            job.sources.append(icount.source())
            job.defines.append(icount.DEFINE)
            if harness.icount_ops:  # the executor's trace calls, recorded by main.c
                job.defines.append(f"{Names(job.model.name).macro}_TRACE_HOOK="
                                   "tvmdev_icount_trace")
        if self.board.rtos is not None:  # the kernel's files, and the glue tvmdev writes
            run = self.board.run
            assert self.board.memory is not None
            kernel = rtos_build(load_rtos(self.board.rtos), self.board.cpu, self.board.name,
                                run.clock_hz or DEFAULT_CLOCK_HZ, job.build_dir / "rtos",
                                harness.command,
                                kernel_heap(self.board.memory.stack, MAX_THREADS))
            job.sources += kernel.sources
            # first: the kernel's cmsis_os2.h, not platforms/cmsis/include's declarations
            job.include_dirs[:0] = kernel.include_dirs
            job.defines += [*kernel.defines, "TVMDEV_SIM_CMSIS_RTOS2", "TVMDEV_RTOS"]
            # your devices' calls, counted per thread by the harness on their way
            job.link_flags += [f"-Wl,--wrap=TVMDevice{camel(k)}{fn}"
                               for k in harness.counted_kinds() for fn, _, _ in COUNTED_CALLS]
        return firmware_files(harness)

    def build(self, job: Job, fault: str | None = None,
              extra_cflags: tuple[str, ...] = ()) -> Path:
        """Build the program; ``fault`` compiled in where it cannot be passed at run time.
        The worst-case stack below the run function goes into build.json."""
        exe = compile_program(job, [f'TVMDEV_SIM_FAIL="{fault}"'] if fault else [],
                              extra_cflags, stack_usage=True)
        cc = self.board.toolchain.cc
        objdump = (cc[:-3] if cc.endswith("gcc") else cc + "-") + "objdump"
        job.stack = analyse(sorted(object_dir(job).glob("*.ci")), exe, objdump,
                            f"tvmgen_{job.model.name}_run")
        _record(job)
        return exe

    def run_program(self, job: Job, argv: list[str], env: dict[str, str] | None = None
                    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` within the board's timeout; with a co-processor, both machines
        (:mod:`tvmdev.run.link`), the co-processor first and stopped last."""
        if job.coprocessor is None:
            return super().run_program(job, argv, env)
        cop = job.coprocessor
        # Under -icount the main board's clock is its instruction count; the co-processor
        # runs in real time, and the main board idles (counted) while it waits.
        linked = LinkedRun(self.board, job.exe, cop.board, cop.elf, cop.main_uart,
                           cop.coproc_uart,
                           main_args=icount.OPTIONS if job.icount else ()).run()
        job.coproc_console = linked.coproc_stdout
        if linked.timed_out:
            raise TvmdevError(f"the program did not finish in {self.board.run.timeout:g} s",
                              str(job.exe))
        return linked.main

    def command(self, job: Job) -> list[str]:
        """The emulator command line that runs the firmware."""
        run = self.board.run
        assert run.qemu is not None
        if job.icount:
            return icount.command(self.board, job.exe)
        return [run.qemu, *run.args, "-kernel", str(job.exe)]

    def execute(self, job: Job, inputs: dict[str, np.ndarray], options: RunOptions) -> RawRun:
        """Run the built program on ``inputs`` and parse what it printed and wrote."""
        raw = run_firmware(self, job, inputs, self.command(job))
        proc = raw.proc
        used = re.search(r"^tvmdev: stack (\d+)$", proc.stdout, re.M)
        if job.stack is not None and used is not None:
            job.stack = replace(job.stack, measured_bytes=int(used[1]))
            _record(job)
        return raw
