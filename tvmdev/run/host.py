"""Programs that run as processes: on this machine (``native``) or under a user-mode
emulator (``qemu-user``). Inputs and outputs are files; a simulated device's failure is
injected through the environment; several threads can share the devices."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import TvmdevError
from ..render.harness import Harness, host_files
from ..write.files import OutFile
from .backend import Backend, Job, RawRun, RunOptions, parse_output
from .compile import compile_program


class NativeBackend(Backend):
    method = "native"
    supports_threads = True

    def harness_files(self, harness: Harness, job: Job) -> list[OutFile]:
        """The harness around the model (main.c, linker script, Zephyr glue)."""
        return host_files(harness)

    def build(self, job: Job, fault: str | None = None,
              extra_cflags: tuple[str, ...] = ()) -> Path:
        """Build the program; ``fault`` compiled in where it cannot be passed at run time."""
        trace = f"TVMGEN_{job.model.name.upper()}_TRACE_HOOK=tvmdev_host_trace"
        return compile_program(job, [trace], extra_cflags)

    def prefix(self, options: RunOptions) -> list[str]:
        """The emulator the program runs under (none here)."""
        return []

    def execute(self, job: Job, inputs: dict[str, np.ndarray], options: RunOptions) -> RawRun:
        """Run the built program on ``inputs`` and parse what it printed and wrote."""
        model = job.model
        run_dir = job.build_dir / "run"
        in_dir, out_dir, trace_dir = run_dir / "in", run_dir / "out", run_dir / "trace"
        for d in (in_dir, out_dir, trace_dir):
            d.mkdir(parents=True, exist_ok=True)
            for f in d.glob("*.bin"):
                f.unlink()
        for name in model.inputs:
            arr = np.ascontiguousarray(inputs[name], dtype=np.float32)
            arr.tofile(in_dir / f"{model.tensors[name].cname}.bin")
        env = dict(os.environ)
        env.pop("TVMDEV_SIM_FAIL", None)
        if options.fault:
            env["TVMDEV_SIM_FAIL"] = options.fault
        if options.trace:
            env["TVMDEV_TRACE_DIR"] = str(trace_dir)
        argv = [*self.prefix(options), str(job.exe), str(in_dir), str(out_dir)]
        if options.threads > 1 or options.iterations > 1:
            argv += [str(options.threads), str(options.iterations)]
        proc = self.run_program(job, argv, env)
        if proc.returncode not in (0, 1):
            raise TvmdevError(f"the program exited {proc.returncode}: "
                              f"{(proc.stderr or proc.stdout).strip()}", str(job.exe))
        outputs = {}
        for name in model.outputs:
            path = out_dir / f"{model.tensors[name].cname}.bin"
            outputs[name] = np.fromfile(path, dtype=np.float32).reshape(
                model.tensors[name].shape)
        status, status_name, devices, _ = parse_output(proc.stdout)
        return RawRun(proc, status, status_name, devices, outputs, trace_dir)


class QemuUserBackend(NativeBackend):
    """A program for another Linux architecture, run under ``qemu-<arch>``."""

    method = "qemu-user"
    supports_threads = False
    emulates_cpu = True

    def prefix(self, options: RunOptions) -> list[str]:
        """The emulator the program runs under (none here)."""
        run = self.board.run
        assert run.qemu is not None
        return [run.qemu, "-cpu", options.cpu or run.cpu or "max", *run.args]
