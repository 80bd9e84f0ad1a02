"""Staging a compiled model for a board's backend: the model's folder (the bytes ``tvmdev
aot`` writes, under ``model/``), the device code and the harness, in one write; then
running the program and comparing every output with the reference.

    compiled = compile_model(model, board, options)   # tvmdev.plan.pipeline
    job = stage(compiled, build_dir)                  # model/ + devices/ + harness
    job.backend.build(job)                            # the board's backend
    result = execute(job)                             # run, then compare
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import TvmdevError
from ..load.board import Board
from ..load.kernel_tree import board_library
from ..load.platform import platform_by_name
from ..model import reference
from ..model.device import MAX_DEVICES
from ..model.graph import Model
from ..plan.pipeline import Compiled, Options, compile_model, generated_specs
from ..render.device import device_files, project_files, user_device_specs
from ..render.harness import Harness
from ..render.metal import library_files as metal_library_files
from ..render.model import layout, model_files
from ..resources import runtime_dir
from ..write.files import OutFile, sync
from . import icount
from .backend import Job, RunOptions, backend_for
from .compare import OpReport, RunResult, exact_outputs, op_errors
from .custom_reference import host_references
from .trees import TreeBuild, platform_tree

# A platform's kernel library (kernel_library.generator in its platform.yaml, which the
# schema limits to these) -> what renders its files.
LIBRARY_FILES = {"metal": metal_library_files}


def _devices(job: Job, external_dirs: dict[str, Path] | None) -> list[OutFile]:
    """The generated device code (under devices/), and the job's device sources, include
    folders and external trees."""
    compiled = job.compiled
    dev_out = job.build_dir / "devices"
    builds_module = job.backend.builds_device_module
    specs = generated_specs(compiled.devices, job.board, compiled.options.device_memory)
    files = [f for f in project_files(specs) if f.path.startswith("include/") or builds_module]
    for spec in specs:
        files += device_files(spec, sim=spec.name in compiled.devices.sim_kinds)
    for kind in compiled.devices.kinds:
        plat = platform_by_name(kind.platform)
        if kind.origin != "user" and not builds_module:
            job.sources.append(dev_out / plat.device_source.format(name=kind.kind))
            if kind.origin == "sim" and kind.kind in dict(compiled.options.device_memory):
                job.sources.append(dev_out / f"src/device/{kind.kind}/sim_memory.c")
        build = platform_tree(plat, (external_dirs or {}).get(plat.name))
        if build is not None:
            job.trees.append(build)
            job.defines += list(build.tree.defines)
            job.include_dirs += [build.root / i for i in build.tree.include]
    job.include_dirs.append(dev_out / "include")
    if compiled.devices.sim_kinds:
        job.include_dirs.append(runtime_dir() / "sim")
        job.sources.append(runtime_dir() / "sim/tvmdev_sim.c")
        job.defines.append(f"TVMDEV_SIM_MAX_INSTANCES={MAX_DEVICES}")
    lib = platform_by_name(job.board.platform).kernel_library
    if lib is not None and lib.kind in job.model.kinds:
        files += LIBRARY_FILES[lib.generator](job.board, prefix=f"kernels/{lib.kind}/")
        job.include_dirs.append(dev_out / f"kernels/{lib.kind}")
    device_dir = compiled.options.device_dir
    user = [k.kind for k in compiled.devices.with_origin("user")]
    if device_dir is not None and user:
        device_dir = device_dir.resolve()
        job.include_dirs.append(device_dir / "include")
        pattern = platform_by_name(job.board.platform).device_source
        job.sources += [device_dir / pattern.format(name=kind) for kind in user]
    return [OutFile(f"devices/{f.path}", f.content, f.kind) for f in files]


def cmsis_drivers(compiled: Compiled) -> dict[str, str]:
    """Each device kind's CMSIS-Driver (usart, spi, i2c): the option it was generated
    with, the user's (its new-device folder) or tvmdev's (a simulated device)."""
    specs = [*compiled.options.device_specs, *generated_specs(compiled.devices,
                                                              compiled.board)]
    used = {k.kind for k in compiled.devices.kinds}
    for spec in specs:
        rtos = dict(spec.options).get("rtos", "none")
        if spec.name in used and rtos != "none" and compiled.board.rtos is None:
            raise TvmdevError(f"device kind {spec.name} was generated with --rtos {rtos}: "
                              f"its firmware needs a kernel",
                              hint="run with --rtos rtx5 or --rtos freertos (or regenerate "
                                   "the device with --rtos none)")
    return {s.name: str(dict(s.options).get("cmsis_driver", "usart")) for s in specs
            if "cmsis" in s.platforms}


def stage(compiled: Compiled, build_dir: Path, inputs: dict[str, np.ndarray] | None = None,
          external_dirs: dict[str, Path] | None = None, instructions: bool = False,
          command: str | None = None, per_operator: bool = False) -> Job:
    """Write everything a build of ``compiled`` needs into ``build_dir``, in one write:
    the model's folder (``model/``, byte for byte what ``tvmdev aot`` writes), the device
    code and the harness. Firmware compiles ``inputs`` in (default: the seeded random
    inputs). ``external_dirs``: third-party trees by platform (else each platform's
    environment variable). ``instructions``: build the instruction counter around the
    run call (qemu-system boards, :mod:`tvmdev.run.icount`), and with ``per_operator`` the
    counter at each operator's end. ``command``: what the
    banners record (default: the model's file name alone)."""
    build_dir = build_dir.resolve()
    board, model = compiled.board, compiled.model
    backend = backend_for(board)
    if instructions:
        icount.check(board)
    inputs = reference.random_inputs(model) if inputs is None else inputs
    job = Job(model, board, backend, build_dir, compiled, compiled.devices, inputs,
              backend.exe_path(build_dir, model), icount=instructions)
    files = _devices(job, external_dirs)
    command = command or f"tvmdev aot {Path(model.path).name}"
    files += [OutFile(f"model/{f.path}", f.content, f.kind)
              for f in model_files(compiled, command)]
    model_dir = build_dir / "model"
    lay = layout(compiled)
    shipped = {p.parent for p in lay.copies}
    job.include_dirs = list(dict.fromkeys([
        *lay.include_paths(model_dir), *job.include_dirs,
        *(d for d in compiled.include_dirs() if d.resolve() not in shipped)]))
    job.defines += board.tuning.defines()  # the kernels as the planner sized their scratch
    dev_sources = list(job.sources)
    job.sources = []
    harness = Harness(model, board, compiled.devices, inputs, f"tvmdev run {Path(model.path).name}",
                      icount=instructions, drivers=cmsis_drivers(compiled),
                      icount_ops=len(model.operators) if per_operator else 0,
                      memory={k: (m.size, m.alignment)
                              for k, m in compiled.options.device_memory},
                      regions=compiled.regions, workspace_io=compiled.workspace_io)
    files += backend.harness_files(harness, job)
    main = [build_dir / "main.c"] if any(f.path == "main.c" for f in files) else []
    kernels = dict.fromkeys(lay.mapped(s, model_dir) for s in compiled.sources())
    job.sources = [*main, model_dir / f"tvmgen_{model.name}.c", *dev_sources, *job.sources,
                   *kernels]
    job.trees += [TreeBuild(board_library(t.library).pinned(), t.root, (("", t.sources),))
                  for t in compiled.trees]
    sync(build_dir, files)
    return job


def prepare(model: Model, board: Board, build_dir: Path, schedule: str = "eager",
            device_dir: Path | None = None, kernel_files: list[Path] | None = None,
            inputs: dict[str, np.ndarray] | None = None,
            external_dirs: dict[str, Path] | None = None, instructions: bool = False,
            trees: tuple[tuple[str, str], ...] = ()) -> Job:
    """:func:`compile_model` then :func:`stage`, for callers with a model in hand."""
    options = Options(schedule, tuple(kernel_files or ()), device_dir,
                      user_device_specs(device_dir) if device_dir is not None else (), trees,
                      stand_in_kernels=True)
    compiled = compile_model(model, board, options,
                             device_root=build_dir.resolve() / "devices")
    return stage(compiled, build_dir, inputs, external_dirs, instructions)


def execute(job: Job, inputs: dict[str, np.ndarray] | None = None,
            options: RunOptions | None = None) -> RunResult:
    """Run the built program and compare with the numpy reference."""
    model = job.model
    inputs = job.inputs if inputs is None else inputs
    options = options or RunOptions()
    raw = job.backend.execute(job, inputs, options)
    # A model with state runs its iterations as consecutive invocations: so does the
    # reference, from a reset state.
    state: dict[str, np.ndarray] = {}
    # The reference evaluates the model as imported: the plan's exact rewrites (PAD
    # folding) are what the run checks, so they are not in the reference.
    ref_model = job.compiled.imported or model
    by_name = {op.name: op.index for op in ref_model.operators}
    overrides = {by_name[model.operators[i].name]: f for i, f in host_references(job).items()}
    for _ in range(options.iterations if model.states else 1):
        ref = reference.evaluate(ref_model, inputs, overrides=overrides, state=state)
    result = RunResult(raw.status, raw.status_name, raw.outputs,
                       {k: ref[k] for k in model.outputs}, raw.devices,
                       stdout=raw.proc.stdout, stderr=raw.proc.stderr,
                       exit_code=raw.proc.returncode, quantized=bool(model.quantized),
                       stack=job.stack, failed_thread=raw.failed_thread,
                       exact=exact_outputs(model))
    for op in model.operators:
        max_abs, max_rel = op_errors(model, ref, raw.trace_dir, op.index, op.outputs[0])
        result.ops.append(OpReport(op.index, op.name, op.op, op.device,
                                   job.compiled.chains[op.index][0].name,
                                   list(model.tensors[op.outputs[0]].shape), max_abs, max_rel))
    return result
