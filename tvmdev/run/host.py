"""Programs that run as processes: on this machine (``native``) or under a user-mode
emulator (``qemu-user``). Inputs and outputs are files; a simulated device's failure is
injected through the environment; several threads can share the devices."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError, cut
from ..model.graph import Model
from ..model.shapes import numel
from ..render.harness import Harness, host_files
from ..write.files import OutFile
from .backend import Backend, Job, RawRun, RunOptions, failed_thread, parse_output
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
            arr = np.ascontiguousarray(inputs[name], dtype=_np_dtype(model, name))
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
        (run_dir / "stderr.txt").write_text(proc.stderr)
        if proc.returncode not in (0, 1) or "tvmdev: status" not in proc.stdout:
            raise TvmdevError(f"the program exited {proc.returncode}"
                              + (f": {_summary(proc.stderr)}" if proc.stderr.strip() else
                                 " without a status line"), str(job.exe),
                              hint=f"what it wrote to stderr is in {run_dir / 'stderr.txt'}"
                              if proc.stderr.strip() else None)
        outputs = {}
        for name in model.outputs:
            path = out_dir / f"{model.tensors[name].cname}.bin"
            want = model.tensors[name].shape
            data = (np.fromfile(path, dtype=_np_dtype(model, name)) if path.is_file()
                    else np.zeros(0))
            if data.size != numel(want):
                raise TvmdevError(f"the program wrote {data.size} values of output '{name}', "
                                  f"not {numel(want)}", str(path))
            outputs[name] = data.reshape(want)
        status, status_name, devices, _ = parse_output(proc.stdout)
        return RawRun(proc, status, status_name, devices, outputs, trace_dir,
                      failed_thread(proc.stdout))


def _np_dtype(model: Model, name: str) -> np.dtype[Any]:
    """The numpy dtype of a model input or output."""
    return np.dtype(model.tensors[name].dtype)


def _summary(stderr: str) -> str:
    """The line of a program's stderr that says what went wrong (a sanitizer's ERROR or
    runtime error line, else the first), cut short."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    found = next((line for line in lines if "ERROR" in line or "runtime error" in line),
                 lines[0] if lines else "")
    return cut(found, 160)


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
