"""The run pipeline: plan, render and write a model for a board in one pass, then let
the board's backend build and run it, and compare every output with the reference.

    job = prepare(model, board, build_dir)     # plan + render + one write
    job.backend.build(job)                     # the board's backend
    result = execute(job)                      # run, then compare
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import TvmdevError
from ..load.board import Board
from ..load.kernel_tree import ActiveLibrary
from ..load.library import Library, load_library
from ..load.platform import all_platforms, platform_by_name
from ..model import reference
from ..model.device import MAX_DEVICES, DeviceSpec, specs_from_manifest
from ..model.graph import Model
from ..plan.devices import DevicePlan, plan_devices
from ..plan.fit import check_fit
from ..plan.kernels import build_registry, device_dir_libraries
from ..render.device import delegated_sources, device_files, project_files
from ..render.executor import generate
from ..render.harness import Harness
from ..resources import runtime_dir
from ..write.files import OutFile, sync
from ..write.manifest import MANIFEST, MANIFEST_HINT, read_manifest
from . import external, icount
from .backend import Job, RunOptions, backend_for
from .compare import OpReport, RunResult, exact_outputs, op_errors

SIM_COMMAND = "tvmdev run (simulated accelerator)"


def device_folder_kinds(device_dir: Path) -> dict[str, tuple[str, ...]]:
    """The device kinds of a new-device folder, with the platforms of each; a path that
    is not such a folder is one line."""
    if not device_dir.is_dir():
        raise TvmdevError("no such folder" if not device_dir.exists() else
                          "is not a folder", str(device_dir),
                          hint="--device-dir takes a folder made by tvmdev new-device")
    specs = specs_from_manifest(read_manifest(device_dir).get("devices"),
                                str(device_dir / MANIFEST), all_platforms(), MANIFEST_HINT)
    if not specs:
        raise TvmdevError("no devices here (no .tvmdev.json from tvmdev new-device)",
                          str(device_dir),
                          hint="--device-dir takes a folder made by tvmdev new-device")
    return {s.name: s.platforms for s in specs}


def _device_specs(dplan: DevicePlan, board: Board) -> list[DeviceSpec]:
    """Specs of the kinds tvmdev generates (all but the user's own)."""
    board_plat = platform_by_name(board.platform)
    flags = tuple((o.name, True) for o in board_plat.options if o.kind == "flag")
    return [DeviceSpec(k.kind, (k.platform,), options=flags if k.platform == board.platform
                       else (), ops=k.ops, command=SIM_COMMAND, given=k.kind)
            for k in dplan.kinds if k.origin != "user"]


def _library(files: list[OutFile], path: str, root: Path, kind: str, include: Path
             ) -> Library | None:
    """A device kernel library among files about to be written under ``root``."""
    for f in files:
        if f.path == path:
            return load_library(root / path, "device", kind, kind, include, text=f.data.decode())
    return None


def _devices(job: Job, specs: list[DeviceSpec], device_dir: Path | None,
             external_dirs: dict[str, Path] | None) -> tuple[list[OutFile], list[Library]]:
    """The generated device code (under devices/), its kernel libraries, and the job's
    device sources, include folders and external trees."""
    dev_out = job.build_dir / "devices"
    builds_module = job.backend.builds_device_module
    files = [f for f in project_files(specs) if f.path.startswith("include/") or builds_module]
    libs: list[Library] = []
    for spec in specs:
        files += device_files(spec, sim=spec.name in job.devices.sim_kinds)
    for spec in specs:
        plat = platform_by_name(spec.platforms[0])
        if not builds_module:
            job.sources.append(dev_out / plat.device_source.format(name=spec.name))
        lib = _library(files, f"kernels/{spec.name}.yaml", dev_out, spec.name,
                       dev_out / "include")
        if lib is not None:
            libs.append(lib)
        root = external.tree(plat, (external_dirs or {}).get(plat.name))
        if root is not None and plat.external is not None:
            job.external.append((plat, root))
            job.defines += list(plat.external.defines)
            job.include_dirs += [root / i for i in plat.external.include]
    job.include_dirs.append(dev_out / "include")
    if job.devices.sim_kinds:
        job.include_dirs.append(runtime_dir() / "sim")
        job.sources.append(runtime_dir() / "sim/tvmdev_sim.c")
        job.defines.append(f"TVMDEV_SIM_MAX_INSTANCES={MAX_DEVICES}")
    lib_spec = platform_by_name(job.board.platform).kernel_library
    if lib_spec is not None and lib_spec.kind in job.model.kinds:
        generator = importlib.import_module(f"tvmdev.render.{lib_spec.generator}")
        folder = f"kernels/{lib_spec.kind}/"
        files += generator.library_files(job.board, prefix=folder)
        lib = _library(files, folder + "kernels.yaml", dev_out, lib_spec.kind, dev_out / folder)
        assert lib is not None
        libs.insert(0, lib)
        job.include_dirs.append(dev_out / folder)
    user = [k.kind for k in job.devices.with_origin("user")]
    if device_dir is not None and user:
        device_dir = device_dir.resolve()
        job.include_dirs.append(device_dir / "include")
        pattern = platform_by_name(job.board.platform).device_source
        job.sources += [device_dir / pattern.format(name=kind) for kind in user]
        libs += device_dir_libraries(device_dir, user)
    return [OutFile(f"devices/{f.path}", f.content, f.kind) for f in files], libs


def _companions(specs: list[DeviceSpec], dplan: DevicePlan, device_dir: Path | None
                ) -> tuple[Path, ...]:
    """The portable sources that the kernel files of the devices call besides the
    selected kernels (render.device.delegated_sources): of the kinds tvmdev generates and
    of those a new-device folder (``device_dir``) implements."""
    user = {k.kind for k in dplan.with_origin("user")}
    if device_dir is not None and user:
        specs = specs + [s for s in specs_from_manifest(
            read_manifest(device_dir).get("devices"), str(device_dir / MANIFEST),
            all_platforms(), MANIFEST_HINT) if s.name in user]
    return tuple(sorted({p for s in specs for p in delegated_sources(s)}))


def prepare(model: Model, board: Board, build_dir: Path, schedule: str = "eager",
            device_dir: Path | None = None, kernel_files: list[Path] | None = None,
            inputs: dict[str, np.ndarray] | None = None,
            external_dirs: dict[str, Path] | None = None,
            libraries: tuple[ActiveLibrary, ...] = (), instructions: bool = False) -> Job:
    """Plan, render and write everything a build of ``model`` for ``board`` needs into
    ``build_dir``, in one write. Firmware compiles ``inputs`` in (default: the seeded
    random inputs). ``external_dirs``: third-party trees by platform (else each
    platform's environment variable). ``libraries``: the board's kernel libraries in use
    (:func:`tvmdev.load.kernel_tree.activate`). ``instructions``: build the instruction
    counter around the run call (qemu-system boards, :mod:`tvmdev.run.icount`)."""
    build_dir = build_dir.resolve()
    backend = backend_for(board)
    if instructions:
        icount.check(board)
    dplan = plan_devices(model, board,
                         device_folder_kinds(device_dir) if device_dir is not None else None)
    model = dplan.model
    inputs = reference.random_inputs(model) if inputs is None else inputs
    job = Job(model, board, backend, build_dir, None, dplan, inputs,  # type: ignore[arg-type]
              backend.exe_path(build_dir, model), include_dirs=[build_dir / "model"],
              icount=instructions)
    specs = _device_specs(dplan, board)
    dev_files, device_libs = _devices(job, specs, device_dir, external_dirs)
    registry = build_registry([*board.kernels, *(kernel_files or [])], device_libs, libraries)
    command = f"tvmdev run {Path(model.path).name}"
    job.gen = replace(generate(model, registry, schedule, command=command,
                               tuning=board.tuning),
                      companions=_companions(specs, dplan, device_dir))
    check_fit(model, job.gen.memory, board)  # before anything is written
    job.defines += board.tuning.defines()  # the kernels as the planner sized their scratch
    files = dev_files + [OutFile(f"model/{f.path}", f.content, f.kind) for f in job.gen.files]
    dev_sources = list(job.sources)
    job.sources = []
    harness = Harness(model, board, dplan, inputs, command, icount=instructions)
    files += backend.harness_files(harness, job)
    main = [build_dir / "main.c"] if any(f.path == "main.c" for f in files) else []
    job.sources = [*main, build_dir / "model" / f"tvmgen_{model.name}.c", *dev_sources,
                   *job.sources, *job.gen.sources(), *job.gen.tree_sources()]
    job.include_dirs = list(dict.fromkeys([*job.include_dirs, *job.gen.include_dirs()]))
    sync(build_dir, files)
    return job


def execute(job: Job, inputs: dict[str, np.ndarray] | None = None,
            options: RunOptions | None = None) -> RunResult:
    """Run the built program and compare with the numpy reference."""
    model = job.model
    inputs = job.inputs if inputs is None else inputs
    raw = job.backend.execute(job, inputs, options or RunOptions())
    ref = reference.evaluate(model, inputs)
    result = RunResult(raw.status, raw.status_name, raw.outputs,
                       {k: ref[k] for k in model.outputs}, raw.devices,
                       stdout=raw.proc.stdout, stderr=raw.proc.stderr,
                       exit_code=raw.proc.returncode, quantized=bool(model.quantized),
                       stack=job.stack, failed_thread=raw.failed_thread,
                       exact=exact_outputs(model))
    for op in model.operators:
        max_abs, max_rel = op_errors(model, ref, raw.trace_dir, op.index, op.outputs[0])
        result.ops.append(OpReport(op.index, op.name, op.op, op.device,
                                   job.gen.chains[op.index][0].name,
                                   list(model.tensors[op.outputs[0]].shape), max_abs, max_rel))
    return result
