"""Zephyr: ``zephyr_app`` built with west around the generated model and device module,
run as a native program (native_sim) or under qemu-system. The firmware compares its
outputs with the reference itself and prints them too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ..errors import TvmdevError, log_excerpt
from ..load.kernel_tree import board_library
from ..model import reference
from ..model.graph import Model
from ..plan.fit import link_overflow
from ..render.harness import Harness, zephyr_files
from ..render.model import layout
from ..resources import zephyr_app_dir
from ..write.files import OutFile
from .backend import Backend, Job, RawRun, RunOptions
from .compare import tolerance_for
from .firmware import run_firmware


class WestBackend(Backend):
    method = "west"
    tools = ("west",)
    builds_device_module = True
    fault_at_run_time = False

    def exe_path(self, build_dir: Path, model: Model) -> Path:
        """The program or image a build of ``model`` in ``build_dir`` makes."""
        run = self.board.run
        return build_dir / "zephyr" / str(run.exe or run.elf)

    def harness_files(self, harness: Harness, job: Job) -> list[OutFile]:
        """The harness around the model (main.c, linker script, Zephyr glue)."""
        expected = reference.evaluate(job.model, job.inputs)
        tolerances = tolerance_for(job.model, expected)
        model_dir = job.build_dir / "model"
        lay = layout(job.compiled)
        # The model folder's own snippet lists its sources, includes and tree; the app's
        # lists the rest: the glue, and the portable sources device kernels call.
        kernels = [lay.mapped(s, model_dir) for s in job.compiled.sources()]
        return zephyr_files(harness, expected, tolerances,
                            [job.build_dir / "app/tvmdev_app.c",
                             *(s for s in kernels if not s.is_relative_to(model_dir))],
                            [job.build_dir / "app",
                             *(i for i in job.include_dirs if not i.is_relative_to(model_dir)
                               and i not in job.compiled.include_dirs())],
                            [d for d in job.defines if d not in job.board.tuning.defines()])

    takes_cflags = False  # west builds with the app's own configuration

    def build(self, job: Job, fault: str | None = None,
              extra_cflags: tuple[str, ...] = ()) -> Path:
        """Build the program; ``fault`` compiled in where it cannot be passed at run time."""
        if not os.environ.get("ZEPHYR_BASE"):
            raise TvmdevError(f"ZEPHYR_BASE is not set (board {self.board.name} builds with "
                              "Zephyr)", hint="point ZEPHYR_BASE at a Zephyr tree (3.4 or "
                                              "newer)")
        west = shutil.which("west")
        if west is None:
            raise TvmdevError("west is not installed", hint="pip install 'tvmdev[zephyr]'")
        build_dir = job.build_dir
        env = dict(os.environ)
        env.update(dict(self.board.support.env))
        env.setdefault("ZEPHYR_TOOLCHAIN_VARIANT", "host")
        extra = [str(build_dir / "devices")] if (build_dir / "devices/zephyr/module.yml"
                                                 ).is_file() else []
        if env.get("ZEPHYR_EXTRA_MODULES"):
            extra.insert(0, env["ZEPHYR_EXTRA_MODULES"])
        cmd = [west, "build", "-b", str(self.board.support.zephyr_board), "-d",
               str(build_dir / "zephyr"), "-p", "auto", str(zephyr_app_dir()), "--",
               f"-DZEPHYR_EXTRA_MODULES={';'.join(extra)}",
               f"-DTVMDEV_MODEL_CMAKE={build_dir / 'model' / f'tvmgen_{job.model.name}.cmake'}",
               f"-DTVMDEV_APP_CMAKE={build_dir / 'app/tvmdev_app.cmake'}",
               *(f"-D{board_library(t.library).pinned().env}={t.root}" for t in job.compiled.trees),
               f"-DDTC_OVERLAY_FILE={build_dir / 'app.overlay'}",
               f"-DOVERLAY_CONFIG={build_dir / 'tvmdev.conf'}"]
        (build_dir / "build.cmd").write_text(" ".join(cmd) + "\n")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            overflow = link_overflow(proc.stdout + proc.stderr, job.model, job.compiled.memory,
                                     self.board)
            if overflow is not None:
                raise overflow
            raise TvmdevError(f"the Zephyr build failed (west exited {proc.returncode})",
                              str(build_dir), log=log_excerpt(proc.stdout + proc.stderr, 25,
                                                              tail=True),
                              hint="the full command is in build.cmd")
        return job.exe

    def execute(self, job: Job, inputs: dict[str, np.ndarray], options: RunOptions) -> RawRun:
        """Run the built program on ``inputs`` and parse what it printed and wrote."""
        run = self.board.run
        argv = ([str(job.exe)] if run.qemu is None
                else [run.qemu, *run.args, "-kernel", str(job.exe)])
        return run_firmware(self, job, inputs, argv)
