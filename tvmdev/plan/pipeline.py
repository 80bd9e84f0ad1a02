"""The one compile pipeline: a model, a board and the options, to one immutable result.

    compiled = compile_model(model, board, Options(schedule="lazy"))
    files = model_files(compiled, command)          # tvmdev.render.model

Every caller goes through here, as every TVM caller goes through ``relay.build``: ``tvmdev
aot`` writes the rendered files; ``tvmdev run`` writes the same files under ``model/``,
adds the devices and a harness, builds and runs. The stages, in order:

1. devices: the board's offload, and which implementation each device kind gets
   (:mod:`.devices`);
2. kernels: the registry (the user's libraries, the device kinds', the board's kernel
   libraries, portable) and each operator's chain (:mod:`.kernels`, :mod:`.placement`);
3. memory: the schedule, and the workspace with every kernel's scratch (:mod:`.memory`);
4. fit: the board's memory map, each pool in a region (:mod:`.fit`, :mod:`.memory_map`);
5. prepared operators: each operator's chain, params and scratch, once (:mod:`.prepare`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..load.board import Board
from ..load.device_kernels import delegated_sources, stand_in_library
from ..load.device_layouts import Layout
from ..load.kernel_tree import activate
from ..load.library import Kernel, Library, load_library
from ..load.platform import all_platforms, platform_by_name
from ..load.rtos import load_rtos
from ..model.cnames import check_model
from ..model.device import DeviceMemory, DeviceSpec
from ..model.graph import Model
from ..model.limits import object_problem
from ..model.scratch import Tuning
from ..resources import runtime_dir
from .code_size import estimate, ops_params_bytes
from .device_boards import with_device_boards
from .device_layouts import lay_out
from .device_memory import DeviceMemoryPlan, plan_device_memory
from .devices import DevicePlan, plan_devices
from .fit import check_fit
from .fusing import Fusing, plan_fusions
from .inplace import inplace_inputs, keeping
from .kernels import (
    Registry,
    build_registry,
    device_dir_libraries,
    operator_scratch,
    portable_library,
    resolve,
    tensor_dtypes,
)
from .memory import MemoryPlan, plan_memory
from .memory_map import MemoryMap
from .padfold import fold_pads
from .patch import Patched, Stage, patch_model, patched
from .patch_search import choose
from .placement import Placed, Placement, TreeSources, place
from .prepare import ParamsCache, Prepared, operator_params, prepare, replaced_inputs
from .schedule import Step, schedule

# The command recorded in the banners of the device code tvmdev generates for a run.
SIM_COMMAND = "tvmdev run (simulated accelerator)"


@dataclass(frozen=True)
class Options:
    """What a caller chooses besides the model and the board."""

    schedule: str = "eager"  # "eager" or "lazy" activation
    kernel_files: tuple[Path, ...] = ()  # --kernels: the user's kernel libraries
    device_dir: Path | None = None  # --device-dir: a new-device folder with the user's kinds
    device_specs: tuple[DeviceSpec, ...] = ()  # the kinds of that folder (its manifest)
    # A board kernel library's tree, or "off", by library name (--cmsis-nn)
    trees: tuple[tuple[str, str], ...] = ()
    # Device kinds with no implementation of the user's (no --device-dir) take the kernels
    # tvmdev generates for them: a run's simulated accelerator or scaffold does; aot plans
    # their operators on the other libraries, since the kind's own kernels are unknown.
    stand_in_kernels: bool = False
    # Fold a PAD into the convolution or max pool reading it where that is exact
    # (:mod:`.padfold`); off: every PAD runs as its own operator (--no-fold-pads).
    fold_pads: bool = True
    # Fuse an int8 conv2d and the ADD reading it, and a depthwise_conv2d and the 1x1
    # conv2d reading it, where that does not lose (:mod:`.fuse`); off: each runs as its
    # own operator (--no-fuse).
    fuse: bool = True
    # Write an operator's output over an input that dies there where its kernels allow
    # it, and alias a view to its input with no call (:mod:`.inplace`); off: every
    # operator writes a buffer of its own (--no-inplace).
    inplace: bool = True
    # The device kinds with memory of their own, by kind (docs/device-memory.md).
    device_memory: tuple[tuple[str, DeviceMemory], ...] = ()
    # --place-memory: (pool, region) pairs; the other pools go to the fastest that fit
    place_memory: tuple[tuple[str, str], ...] = ()
    # --io: the model's inputs and outputs in the workspace, or the caller's buffers;
    # None: the board's default (its io:)
    io: str | None = None
    # Device instances whose operators run on another board's kernels, (device, board):
    # a co-processor (--coprocessor); their scratch is sized for that board too.
    device_boards: tuple[tuple[str, str], ...] = ()
    # Constants the device kinds want in their own layout (kernels/<kind>_layouts.yaml)
    device_layouts: tuple[Layout, ...] = ()
    # Patch-based inference (:mod:`.patch`): "auto" chooses the stages that lower the
    # peak most within ``patch_budget`` (instructions over the unpatched plan's), "off"
    # patches nothing; None: the board's default. ``patch_stages``: these stages instead.
    patch: str | None = None
    patch_budget: float = 1.10
    patch_stages: tuple[Stage, ...] = ()


@dataclass(frozen=True)
class Compiled:
    """Everything the pipeline decided: what renderers lay out and builders compile."""

    model: Model  # with the board's offload applied
    board: Board
    options: Options
    devices: DevicePlan
    steps: tuple[Step, ...]
    memory: MemoryPlan
    ops: tuple[Prepared, ...]  # every operator, prepared, by index
    trees: tuple[TreeSources, ...] = ()  # what a build compiles of board libraries' trees
    # Portable sources a device's kernel files call besides the selected kernels'.
    companions: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()  # why a board library is not in use
    device_notes: tuple[str, ...] = ()  # the device kinds whose kernels are not known
    folds: tuple[tuple[str, str], ...] = ()  # (operator, the PAD folded into it)
    # (conv2d, the ADD fused into it) and (depthwise_conv2d, the 1x1 conv2d fused into it)
    fusions: tuple[tuple[str, str], ...] = ()
    # The stages run band by band of rows (patch-based inference)
    patches: tuple[Patched, ...] = ()
    # The model as imported, before the plan's exact rewrites (PAD folding, fusions,
    # patches); None when
    # the plan rewrote nothing. A run's reference evaluates it, not the rewritten model.
    imported: Model | None = None
    # The pools, copies and waits of the devices with memory; None without such devices.
    device_memory: DeviceMemoryPlan | None = None
    regions: MemoryMap | None = None  # each pool's region of the board (None: no map)

    @property
    def schedule_kind(self) -> str:
        """The activation schedule: eager or lazy."""
        return self.options.schedule

    @property
    def workspace_io(self) -> bool:
        """The model's inputs and outputs are planned in the workspace (--io workspace)."""
        return self.options.io == "workspace"

    @property
    def tuning(self) -> Tuning:
        """The board's kernel tuning, which sized the kernels' scratch."""
        return self.board.tuning

    @cached_property
    def chains(self) -> dict[int, tuple[Kernel, ...]]:
        """Operator index -> the kernels it tries, in order."""
        return {p.index: p.chain for p in self.ops}

    @cached_property
    def placements(self) -> dict[int, Placement]:
        """Operator index -> the library serving it, and the fallbacks taken."""
        return {p.index: p.placement for p in self.ops}

    @cached_property
    def kernels(self) -> tuple[Kernel, ...]:
        """The selected kernels (each once): what selective build compiles."""
        seen: dict[str, Kernel] = {}
        for p in self.ops:
            for k in p.chain if p.view_of is None else ():  # a view calls nothing
                seen.setdefault(k.name, k)
        return tuple(seen.values())

    def sources(self) -> list[Path]:
        """The selected kernels' C sources (what selective build compiles)."""
        return sorted({s for k in self.kernels for s in k.sources} | set(self.companions))

    def include_dirs(self) -> list[Path]:
        """The folders of the selected kernels' headers (and of the trees they use)."""
        portable = ({runtime_dir().resolve() / "kernels/portable"} if self.own_libraries()
                    else set())
        return sorted({k.include_dir for k in self.kernels} | portable
                      | {i for t in self.trees for i in t.include})

    def tree_sources(self) -> list[Path]:
        """The board libraries' tree sources the selected kernels reach."""
        return [s for t in self.trees for s in t.sources]

    def board_libraries(self) -> tuple[str, ...]:
        """The names of the board kernel libraries in use that are built from a tree."""
        return tuple(t.library for t in self.trees)

    def own_libraries(self) -> tuple[str, ...]:
        """The names of every board kernel library the selected kernels come from (with
        a tree or without: tvmdev_cm's kernels are its folder's sources alone)."""
        return tuple(sorted({k.library for k in self.kernels if k.level == "board"}))


def generated_specs(dplan: DevicePlan, board: Board,
                    memory: tuple[tuple[str, DeviceMemory], ...] = ()) -> list[DeviceSpec]:
    """Specs of the kinds tvmdev generates for a build (all but the user's own);
    ``memory``: the kinds with memory of their own."""
    board_plat = platform_by_name(board.platform)
    flags: tuple[tuple[str, Any], ...] = tuple((o.name, True) for o in board_plat.options
                                               if o.kind == "flag")
    if board.rtos is not None:  # the device code takes the kernel's mutexes
        flags += load_rtos(board.rtos).device_options
    flags += board.device_options  # the board's, or tvmdev run --device-option
    return [DeviceSpec(k.kind, (k.platform,), options=flags if k.platform == board.platform
                       else (), ops=k.ops, command=SIM_COMMAND, given=k.kind,
                       memory=dict(memory).get(k.kind))
            for k in dplan.kinds if k.origin != "user"]


def _kind_libraries(dplan: DevicePlan, board: Board, device_root: Path,
                    stand_in_kernels: bool) -> list[Library]:
    """The kernel libraries of the kinds tvmdev implements, as a build lays them out
    under ``device_root``: a built-in kind's shipped library (KleidiAI), the board's
    platform library (Metal), and with ``stand_in_kernels`` the kernels of the simulated
    accelerator or scaffold, which new-device would write for the kind's ops."""
    libs = []
    for k in dplan.kinds:
        if k.origin == "builtin":
            plat = platform_by_name(k.platform)
            rule = next(r for r in plat.files if r.path == "kernels/{name}.yaml")
            assert rule.source is not None
            libs.append(load_library(device_root / f"kernels/{k.kind}.yaml", "device",
                                     k.kind, k.kind, device_root / "include",
                                     text=(runtime_dir() / rule.source).read_text()))
        elif k.origin != "user" and stand_in_kernels and k.ops:
            libs.append(stand_in_library(k.kind, k.ops, portable_library(), device_root))
    spec = platform_by_name(board.platform).kernel_library
    if spec is not None and spec.kind in dplan.model.kinds:
        folder = device_root / f"kernels/{spec.kind}"
        libs.insert(0, load_library(folder / "kernels.yaml", "device", spec.kind, spec.kind,
                                    folder, text=(runtime_dir() / spec.kind / "kernels.yaml"
                                                  ).read_text()))
    return libs


def _companions(specs: list[DeviceSpec], dplan: DevicePlan, folder: tuple[DeviceSpec, ...]
                ) -> tuple[Path, ...]:
    """The portable sources that the kernel files of the devices call besides the
    selected kernels (load.device_kernels.delegated_sources)."""
    user = {k.kind for k in dplan.with_origin("user")}
    specs = specs + [s for s in folder if s.name in user]
    portable = portable_library()
    return tuple(sorted({p for s in specs for p in delegated_sources(s, portable)}))


def compile_model(model: Model, board: Board, options: Options = Options(),
                  device_root: Path = Path("devices")) -> Compiled:
    """Plan ``model`` for ``board``: devices, kernels, memory and fit. ``device_root``:
    where a build puts the generated device code (nothing generated depends on it)."""
    options = replace(options, io=options.io or board.io)
    user_kinds = ({s.name: s.platforms for s in options.device_specs}
                  if options.device_dir is not None else None)
    dplan = plan_devices(model, board, user_kinds)
    model, folds = fold_pads(dplan.model) if options.fold_pads else (dplan.model, {})
    device_libs = _kind_libraries(dplan, board, device_root, options.stand_in_kernels)
    user = [k.kind for k in dplan.with_origin("user")]
    if options.device_dir is not None and user:
        device_libs += device_dir_libraries(options.device_dir.resolve(), user)
    # The board's kernel libraries in use, each with its tree, and a note for each that
    # is not (no tree, turned off, or not for this CPU).
    libraries, notes = activate(board.libraries, board.cpu, dict(options.trees) or None,
                                board.platform == "zephyr", board.library_flash)
    device_notes = [] if options.stand_in_kernels else [
        f"device kind {k.kind}: no --device-dir, so its operators are planned on the other "
        "kernel libraries; give the folder tvmdev new-device made for it to call its kernels"
        for k in dplan.with_origin("sim", "scaffold")]
    registry = build_registry([*board.kernels, *options.kernel_files], device_libs,
                              libraries)
    kind_names = frozenset(lib.kind for lib in device_libs if lib.kind)
    model, fusions, _, _ = plan_fusions(
        model, registry, kind_names,
        Fusing(options.fuse, board.tuning, options.inplace, options.io == "workspace"))
    cache: ParamsCache = {}

    def planned(stages: tuple[Stage, ...]) -> _Planned:
        return _plan(patch_model(model, stages)[0], board, options, registry, kind_names,
                     cache)

    stages = options.patch_stages or (choose(
        model, inplace_inputs(model, resolve(model, registry)) if options.inplace else {},
        options.io == "workspace", options.patch_budget,
        lambda st: planned(st).memory.arena_size)
        if (options.patch or board.patch) == "auto" else ())
    named = tuple(patched(model, s) for s in stages)
    got = planned(stages)
    model, steps, params, placed = got.model, got.steps, got.params, got.placed
    dev_mem, memory = got.device_memory, got.memory
    # Every spelling once more, now with a board's offload device and the kernels called.
    check_model(model, all_platforms(), [k.name for c in placed.chains.values() for k in c])
    problem = object_problem(memory.arena_size)
    if problem is not None:
        raise TvmdevError(f"the workspace of model '{model.name}' needs {problem}",
                          model.path, hint="split the model, or make its tensors smaller")
    ops = prepare(model, params, placed, memory,
                  {i: a for p in dev_mem.pools for i, a in p.scratch.items()}
                  if dev_mem else {})
    # the constants whose kernels read a layout of them instead are not emitted
    model = replace(model, replaced=replaced_inputs(model, ops))
    regions = _fit(model, memory, board, options, ops)
    return Compiled(model, board, options, dplan, steps, memory, ops, placed.trees,
                    _companions(generated_specs(dplan, board), dplan, options.device_specs),
                    tuple(notes), tuple(device_notes), tuple(folds.items()),
                    tuple(fusions.items()), named, device_memory=dev_mem,
                    imported=dplan.model if folds or fusions or stages else None,
                    regions=regions)


def _fit(model: Model, memory: MemoryPlan, board: Board, options: Options,
         ops: tuple[Prepared, ...]) -> MemoryMap | None:
    """The pools in the board's regions, the code as :mod:`.code_size` estimates it from
    the kernels' measured sizes (the floor where the CPU or a kernel was never measured)
    and the params arrays with the constants."""
    calling = [p for p in ops if p.view_of is None]
    est = estimate(board.cpu, len(calling),
                   list(dict.fromkeys(k.name for p in calling for k in p.chain)))
    return check_fit(model, memory, board, options.place_memory,
                     io=options.io == "workspace", code=est.total if est else 0,
                     params=ops_params_bytes(ops))


@dataclass(frozen=True)
class _Planned:
    """A model's kernels and memory, planned (:func:`_plan`)."""

    model: Model
    steps: tuple[Step, ...]
    params: dict[int, tuple[str, dict[str, Any]]]
    placed: Placed
    device_memory: DeviceMemoryPlan | None
    memory: MemoryPlan


def _plan(model: Model, board: Board, options: Options, registry: Registry,
          kinds: frozenset[str], cache: ParamsCache) -> _Planned:
    """The schedule, kernels, scratch and memory of ``model`` (the stages of the pipeline
    that :mod:`.patch_search` runs again for each stage it tries)."""
    steps = schedule(model, options.schedule)
    params = operator_params(model, cache)
    placed = place(model, registry.board, resolve(model, registry),
                   {op.index: tensor_dtypes(model, op) for op in model.operators},
                   {i: p for i, (_, p) in params.items()}, kinds)
    scratch = operator_scratch(model, placed.chains, board.tuning, placed.scratch, params)
    scratch = with_device_boards(scratch, model, placed.chains, params, options)
    dev_mem = _device_memory(model, steps, placed, scratch, options)
    if dev_mem is not None:
        steps = dev_mem.steps
        # No kernel takes over at run time: the tensors are in the device's memory.
        placed = replace(placed, chains={i: c[:1] if i in dev_mem.mem_ops else c
                                         for i, c in placed.chains.items()},
                         placements={i: replace(p, then=None) if i in dev_mem.mem_ops else p
                                     for i, p in placed.placements.items()})
        scratch = {i: n for i, n in scratch.items() if i not in dev_mem.mem_ops}
    memory = plan_memory(model, options.inplace and inplace_inputs(model, placed.chains),
                         scratch=scratch, exclude=dev_mem.device_only if dev_mem else frozenset(),
                         no_inplace=frozenset(dev_mem.mem_ops) if dev_mem else frozenset(),
                         io=options.io == "workspace",
                         keeps=keeping(model, placed.chains, board.tuning, scratch, params))
    return _Planned(model, steps, params, placed, dev_mem, memory)


def _device_memory(model: Model, steps: tuple[Step, ...], placed: Placed,
                   scratch: dict[int, int], options: Options) -> DeviceMemoryPlan | None:
    """The plan of the devices whose kinds have memory (``options.device_memory``), or
    None when no operator runs from such a device's memory: those its kind has a kernel
    for. Constants go in the layouts the kinds ask for (``options.device_layouts``)."""
    memories = dict(options.device_memory)
    by_device = {d.name: memories[d.kind] for d in model.devices if d.kind in memories}
    mem_ops = {op.index: op.device for op in model.operators
               if op.device in by_device and placed.chains[op.index][0].level == "device"}
    if not mem_ops:
        return None
    return plan_device_memory(model, steps, mem_ops, by_device, scratch,
                              lay_out(model, mem_ops, options.device_layouts))
