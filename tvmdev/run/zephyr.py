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
from ..load.devicetree import check_memory
from ..load.kernel_tree import board_library
from ..model import reference
from ..model.graph import Model
from ..plan.fit import link_overflow
from ..render.harness import Harness, zephyr_files
from ..render.model import layout
from ..resources import runtime_dir, zephyr_app_dir
from ..write.files import OutFile
from .backend import Backend, Job, RawRun, RunOptions
from .compare import tolerance_for
from .firmware import run_firmware
from .link import LinkedRun


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
        # tvmdev's simulated devices count through the simulator, locked with irq_lock.
        sim = ([runtime_dir() / "sim/tvmdev_sim.c"] if job.devices.sim_kinds else [])
        defines = ["TVMDEV_SIM_ZEPHYR"] if sim else []
        return zephyr_files(harness, expected, tolerances,
                            [job.build_dir / "app/tvmdev_app.c", *sim,
                             *(s for s in kernels if not s.is_relative_to(model_dir))],
                            [job.build_dir / "app",
                             *(i for i in job.include_dirs if not i.is_relative_to(model_dir)
                               and i not in job.compiled.include_dirs())],
                            [*(d for d in job.defines if d not in job.board.tuning.defines()),
                             *defines])

    # --cflags: for the app's own sources (model, kernels, harness), not Zephyr's
    takes_cflags = True
    threads_compiled_in = True  # --threads and --iterations: TVMDEV_THREADS, _ITERATIONS
    kernel_builtin = True  # Zephyr

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
        extra = [str(d) for d in self.modules(job) if (d / "zephyr/module.yml").is_file()]
        if env.get("ZEPHYR_EXTRA_MODULES"):
            extra.insert(0, env["ZEPHYR_EXTRA_MODULES"])
        cmd = [west, "build", "-b", str(self.board.support.zephyr_board), "-d",
               str(build_dir / "zephyr"), "-p", "auto", str(zephyr_app_dir()), "--",
               f"-DZEPHYR_EXTRA_MODULES={';'.join(extra)}",
               f"-DTVMDEV_MODEL_CMAKE={build_dir / 'model' / f'tvmgen_{job.model.name}.cmake'}",
               f"-DTVMDEV_APP_CMAKE={build_dir / 'app/tvmdev_app.cmake'}",
               # What the run adds after staging: threads, iterations, a fault to inject
               f"-DTVMDEV_RUN_DEFINES={';'.join(self.run_defines(job, fault))}",
               f"-DTVMDEV_RUN_SOURCES={';'.join(map(str, job.added_sources))}",
               f"-DTVMDEV_RUN_CFLAGS={';'.join(extra_cflags)}",
               f"-DTVMDEV_RUN_INCLUDES={';'.join(map(str, job.added_includes))}",
               *(f"-D{k}" for k in job.kconfig),
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
        self.check_devicetree(build_dir / "zephyr" / "zephyr" / "zephyr.dts")
        return job.exe

    def check_devicetree(self, dts: Path) -> None:
        """The board file's memory map (the plan's fit check) against the memories the
        build's devicetree chooses (tvmdev/load/devicetree.py)."""
        mem = self.board.memory
        if mem is None or not dts.is_file():
            return
        check_memory(dts, self.board.name, (mem.code.origin, mem.code.length),
                     (mem.ram.origin, mem.ram.length), str(self.board.path))

    @staticmethod
    def modules(job: Job) -> list[Path]:
        """The device folders the build takes as Zephyr modules: the generated one, and
        the user's (--device-dir) when the model has a kind from it."""
        user = job.compiled.options.device_dir
        return [job.build_dir / "devices",
                *([user.resolve()] if user is not None and job.devices.with_origin("user")
                  else [])]

    def run_program(self, job: Job, argv: list[str], env: dict[str, str] | None = None
                    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` within the board's timeout; with a co-processor, both machines
        (:mod:`tvmdev.run.link`), the co-processor first and stopped last."""
        cop = job.coprocessor
        if cop is None:
            return super().run_program(job, argv, env)
        linked = LinkedRun(self.board, job.exe, cop.board, cop.elf, cop.main_uart,
                           cop.coproc_uart).run()
        job.coproc_console = linked.coproc_stdout
        if linked.timed_out:
            raise TvmdevError(f"the program did not finish in {self.board.run.timeout:g} s",
                              str(job.exe))
        return linked.main

    @staticmethod
    def run_defines(job: Job, fault: str | None) -> list[str]:
        """The macros of this build that are not in the staged files: the harness's
        threads and iterations (``job.defines``), and ``--fail``'s fault, compiled in."""
        staged = ("TVMDEV_THREADS=", "TVMDEV_ITERATIONS=")
        return [*(d for d in job.defines if d.startswith(staged)),
                *([f'TVMDEV_SIM_FAIL="{fault}"'] if fault else [])]

    def execute(self, job: Job, inputs: dict[str, np.ndarray], options: RunOptions) -> RawRun:
        """Run the built program on ``inputs`` and parse what it printed and wrote."""
        run = self.board.run
        argv = ([str(job.exe)] if run.qemu is None
                else [run.qemu, *run.args, "-kernel", str(job.exe)])
        return run_firmware(self, job, inputs, argv)
