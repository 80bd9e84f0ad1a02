"""The command handlers: each wires loaders, planners, renderers, the writer and the run
backends together for one subcommand, and prints what happened."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import TvmdevError, UsageError, shown
from ..inspect.check import check_folder
from ..inspect.elf import format_report
from ..inspect.elf import inspect as inspect_elf
from ..load.board import Board, board_by_name
from ..load.platform import PlatformOption, all_platforms, platform_by_name
from ..load.rtos import core_of, load_rtos
from ..model.device import DeviceSpec, device_name, parse_memory
from ..model.graph import Model
from ..model.ops import OPS
from ..model.status import describe
from ..plan.pipeline import Compiled, compile_model
from ..plan.placement import kernels_line
from ..render.device import folder_specs, manifest_for
from ..render.device import generate as device_folder_files
from ..render.harness import MAX_THREADS
from ..render.memory_report import memory_report
from ..render.model import model_files
from ..render.plan_picture import plan_ascii
from ..run import coproc, icount, icount_ops
from ..run.backend import Job, RunOptions, backend_for
from ..run.compare import RunResult, load_inputs, report, save_outputs
from ..run.job import execute, stage
from ..run.threads import unsound_threads
from ..write.files import check_out_dir, write
from ..write.journal import recover
from .arguments import compile_options, model_command, recorded_command
from .importing import load_any
from .sim_memory import kinds_with_memory, memory_lines, split_options


def _prepare_out_dir(out_dir: Path, dry_run: bool) -> None:
    """Check the output folder and complete a write into it that was interrupted, before
    anything reads it (a dry run writes nothing: it stops at such a folder instead)."""
    check_out_dir(out_dir)
    if not dry_run and recover(out_dir):
        print(f"completed an interrupted write into {out_dir}")


def _print_report(lines: list[str], dry_run: bool) -> None:
    if dry_run:
        print("dry run: nothing written; would:")
    for line in lines:
        print(("  " if dry_run else "") + line)


# --- new-device ----------------------------------------------------------------------

def platform_option_flags() -> dict[str, PlatformOption]:
    """Every platform's options, by name (each becomes a new-device flag)."""
    flags: dict[str, PlatformOption] = {}
    for plat in all_platforms().values():
        for opt in plat.options:
            flags.setdefault(opt.name, opt)
    return flags


def _platform_options(args: argparse.Namespace, chosen: list[str]) -> dict[str, Any]:
    """The platform options given to new-device, each checked: its platform selected, a
    string in its syntax, the flag it requires given."""
    options: dict[str, Any] = {}
    flags = platform_option_flags()
    for oname, opt in flags.items():
        value = getattr(args, oname)
        if value is None:
            continue
        owners = [p for p in chosen if oname in {o.name for o in platform_by_name(p).options}]
        if not owners:
            declared = [p.name for p in all_platforms().values()
                        if oname in {o.name for o in p.options}]
            raise TvmdevError(f"{opt.flag} applies to platform {', '.join(declared)}, "
                              "which is not selected",
                              hint=f"add --platform {declared[0]} or drop {opt.flag}")
        if opt.pattern is not None and not re.fullmatch(opt.pattern, str(value)):
            raise TvmdevError(f"{opt.flag} {shown(value)} is not {opt.syntax or opt.pattern}",
                              hint=f"{opt.flag} takes {opt.syntax or opt.pattern}")
        if opt.requires is not None and not getattr(args, opt.requires):
            need = flags[opt.requires].flag
            raise TvmdevError(f"{opt.flag} needs {need}", hint=f"add {need} or drop {opt.flag}")
        options[oname] = value
    return options


def cmd_new_device(args: argparse.Namespace) -> int:
    """``tvmdev new-device``: generate (or add to) a device folder."""

    name = device_name(args.name)
    chosen: list[str] = []
    for p in args.platform or []:
        if p in chosen:
            raise TvmdevError(f"--platform {p} is given twice",
                              hint="name each platform once")
        plat = platform_by_name(p)
        if plat.builtin_kind and plat.builtin_kind != name:
            raise TvmdevError(f"platform {p} implements the built-in device kind "
                              f"'{plat.builtin_kind}', not '{name}'",
                              hint=f"tvmdev new-device {plat.builtin_kind} --platform {p}")
        chosen.append(p)
    if not chosen:
        raise UsageError("new-device needs at least one --platform (see: tvmdev list platforms)")
    options = _platform_options(args, chosen)
    ops = tuple(o for o in (args.ops if args.ops is not None else "gemm,matmul").split(",") if o)
    for o in ops:
        if o not in OPS:
            raise TvmdevError(f"--ops: unknown op {shown(o)}", hint="known ops: " + ", ".join(OPS))
    if len(set(ops)) != len(ops):
        raise TvmdevError("--ops names an op twice")
    memory = parse_memory(args.memory) if args.memory is not None else None
    builtin = [p for p in chosen if platform_by_name(p).builtin_kind]
    if memory is not None and builtin:
        raise TvmdevError(f"--memory does not apply to the built-in kind '{name}' "
                          f"(platform {builtin[0]} runs it in the host's memory)",
                          hint="drop --memory")
    spec = DeviceSpec(name=name, platforms=tuple(chosen), options=tuple(sorted(options.items())),
                      ops=ops, command=recorded_command(args.argv), given=args.name,
                      memory=memory)
    out_dir = Path(args.output)
    _prepare_out_dir(out_dir, args.dry_run)
    specs = folder_specs(out_dir, spec)
    report = write(out_dir, device_folder_files(specs), manifest_for(specs), force=args.force,
                   dry_run=args.dry_run)
    _print_report(report.lines(), args.dry_run)
    return 0


# --- aot and run ---------------------------------------------------------------------

def cmd_aot(args: argparse.Namespace) -> int:
    """``tvmdev aot``: generate a model's executor, its selected kernels and its build
    files."""
    out_dir = Path(args.output)
    _prepare_out_dir(out_dir, args.dry_run)
    m = load_any(args)
    board = with_rtos(board_by_name(args.board or "host"), args.rtos, False, run=False)
    compiled = compile_model(m, board, compile_options(args, run=False))
    command = model_command(Path(args.model), args)
    # aot owns its model's entry under "models" (other models and new-device's "devices"
    # stay); "model" and "command" were this command's keys before a folder held several.
    records = {"tool": "tvmdev", "version": __version__, "models": {m.name: {"command": command}},
               "model": None, "command": None}
    report = write(out_dir, model_files(compiled, command), records, force=args.force,
                   dry_run=args.dry_run)
    _print_report(report.lines(), args.dry_run)
    for line in memory_report(compiled):
        print(line)
    if args.show_plan:
        for line in plan_ascii(compiled.model, compiled.memory):
            print(line)
    mem = compiled.memory
    state = f"; state {mem.state_region[1]} of it" if mem.states else ""
    print(f"arena: {mem.arena_size} bytes ({mem.tensor_arena_size} without kernel scratch"
          f"{state}; lower bound {mem.lower_bound}, ratio {mem.ratio:.3f}); kernels: "
          f"{', '.join(k.name for k in compiled.kernels)}")
    for line in [*_library_lines(compiled), *memory_lines(compiled)]:
        print(line)
    if compiled.folds:
        print("pads folded into their readers: " + ", ".join(
            f"{pad} into {op}" for op, pad in compiled.folds))
    if compiled.fusions:
        print("operators fused: " + ", ".join(
            f"{op} + {add}" for op, add in compiled.fusions))
    for band_stage in compiled.patches:
        print(f"patch-based: {band_stage.describe()}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """``tvmdev run``: generate, build and run a model on a board, then compare."""
    m = load_any(args)
    sim = split_options(args.device_option)
    board = with_device_options(with_rtos(board_by_name(args.board), args.rtos,
                                          args.instructions), sim.rest)
    backend = backend_for(board)
    if args.cpu and not backend.emulates_cpu:
        raise TvmdevError(f"--cpu picks the CPU an emulator runs; board {board.name} "
                          f"does not run under qemu-user")
    threaded = board.rtos is not None or backend.threads_compiled_in
    if (not backend.supports_threads and not threaded
            and (args.threads > 1 or args.iterations > 1)):
        raise TvmdevError(f"--threads and --iterations run on the host, on an RTOS "
                          f"(--rtos) or on Zephyr, not on {board.name}")
    cflags = _cflags(args.cflags)
    if cflags and not backend.takes_cflags:
        raise TvmdevError(f"--cflags (or TVMDEV_CFLAGS): board {board.name} builds with its "
                          "own configuration", hint="unset TVMDEV_CFLAGS for this board")
    if args.threads > MAX_THREADS:
        raise TvmdevError(f"--threads {args.threads}: the host harness runs at most "
                          f"{MAX_THREADS} threads")
    if args.instructions:
        icount.check(board)
    if args.per_operator and not (args.instructions and board.rtos is None):
        raise TvmdevError("--per-operator counts each operator's instructions: it needs "
                          "--instructions, on a board run without an RTOS",
                          hint="add --instructions (and --rtos none on an RTOS board)")
    inputs = load_inputs(m, Path(args.inputs) if args.inputs else None)
    build_dir = Path(args.build_dir or f"tvmdev-build/{m.name}-{board.name}")
    check_out_dir(build_dir, "--build-dir")
    if args.save_outputs:
        check_out_dir(Path(args.save_outputs), "--save-outputs")
    backend.check_host()
    options = compile_options(args, run=True)
    options = replace(options, device_memory=options.device_memory + kinds_with_memory(
        m, board, sim.memory, [s.name for s in options.device_specs]))
    compiled = compile_model(m, board, options, device_root=build_dir.resolve() / "devices")
    linked = coproc.check(compiled, args.coprocessor) if args.coprocessor else None
    job = stage(compiled, build_dir, inputs,
                {"kleidiai": Path(args.kleidiai)} if args.kleidiai else None,
                instructions=args.instructions, per_operator=args.per_operator,
                command=model_command(Path(args.model), args))
    if threaded:  # the firmware's threads, compiled in
        job.defines += [f"TVMDEV_THREADS={args.threads}", f"TVMDEV_ITERATIONS={args.iterations}"]
    if sim.asynchronous:
        job.defines.append("TVMDEV_SIM_ASYNC=1")
    if linked is not None:
        coproc.attach(job, linked)
    said = [*_library_lines(compiled), *memory_lines(compiled)]
    at_run_time = backend.fault_at_run_time
    backend.build(job, fault=None if at_run_time else args.fail, extra_cflags=cflags)
    result = execute(job, inputs, RunOptions(fault=args.fail if at_run_time else None,
                                             threads=args.threads,
                                             iterations=args.iterations, cpu=args.cpu))
    after = [*(_instructions(job, result) if args.instructions else ()),
             *coproc.bus_lines(result.stdout)]
    return _finish(args, compiled.model, result, said, after)


def with_rtos(board: Board, rtos: str | None, instructions: bool, run: bool = True) -> Board:
    """The board with the kernel of ``--rtos`` (``none``: without the board's), checked:
    a board of the cmsis platform with a memory map (to ``run``, a qemu-system one) and a
    port of the kernel for its core."""
    if rtos is not None:
        board = replace(board, rtos=None if rtos == "none" else rtos)
    if board.rtos is None:
        return board
    if not run and (board.platform != "cmsis" or board.memory is None):
        raise TvmdevError(f"--rtos {board.rtos}: board {board.name} is not a board of the "
                          "cmsis platform with a memory map", board.where,
                          hint="give --board: mps2_an385, mps2_an386, mps3_an547")
    if run and (board.run.method != "qemu-system" or board.platform != "cmsis"):
        raise TvmdevError(f"--rtos {board.rtos}: board {board.name} is not a qemu-system "
                          "board of the cmsis platform", board.where,
                          hint="RTOS firmware runs on mps2_an385, mps2_an386, mps3_an547")
    core_of(load_rtos(board.rtos), board.cpu)
    if instructions:  # counted with the kernel's own timer, its ticks included
        icount.check(board)
    return board


def with_device_options(board: Board, given: Sequence[str]) -> Board:
    """The board with ``--device-option NAME=VALUE`` over its device_options, each an
    option of its platform with one of its choices."""
    opts = dict(board.device_options)
    plat = platform_by_name(board.platform)
    for text in given:
        name, _, value = text.partition("=")
        opt = next((o for o in plat.options if o.name == name and o.kind == "choice"), None)
        if opt is None or value not in [c.value for c in opt.choices]:
            known = ", ".join(f"{o.name}={'|'.join(c.value for c in o.choices)}"
                              for o in plat.options if o.kind == "choice")
            raise TvmdevError(f"--device-option {text}: not an option of platform "
                              f"{plat.name}", hint=f"options: {known or 'none'}")
        opts[name] = value
    return replace(board, device_options=tuple(opts.items()))


def _instructions(job: Job, result: RunResult) -> list[str]:
    """The ``--instructions`` line: the run call's instructions, from the ticks the
    firmware printed (none when the run failed before printing them)."""
    ticks = icount.ticks(result.stdout)
    clock = job.board.run.clock_hz
    if ticks is None or clock is None:
        return ["instructions per inference: not counted (the firmware printed no ticks)"]
    loops = icount.idle_loops(result.stdout)
    lines = [icount.summary(clock, ticks),
             *([icount.idle_summary(clock, ticks, loops)] if loops else [])]
    ops = icount_ops.op_counts(result.stdout, ticks, clock)
    if ops is not None:
        lines += icount_ops.table(job.compiled, ops)
    last = icount.last_run(result.stdout)
    if last is not None:
        lines += [icount.summary(clock, last[0]).replace("per inference", "in the last run"),
                  *([icount.idle_summary(clock, *last)] if last[1] else [])]
    return lines


def _library_lines(compiled: Compiled) -> list[str]:
    """What a command says of the kernel libraries: the notes (for an int8 or int16 model,
    whose operators they would serve) and the kernels line."""
    m = compiled.model
    quantized = any(m.op_dtype(op) != "float32" for op in m.operators)
    return ([f"note: {n}" for n in compiled.notes if quantized]
            + [f"note: {n}" for n in compiled.device_notes]
            + [kernels_line(m, compiled.placements)])


def _cflags(text: str | None) -> tuple[str, ...]:
    """``--cflags`` split as a shell would."""
    try:
        return tuple(shlex.split(text or ""))
    except ValueError as exc:
        raise TvmdevError(f"--cflags (or TVMDEV_CFLAGS): {exc}") from None


def _finish(args: argparse.Namespace, m: Model, result: RunResult,
            said: Sequence[str] = (), after: Sequence[str] = ()) -> int:
    print(f"model {m.name} on {args.board} ({args.schedule} schedule)")
    for line in said:
        print(line)
    for line in [*report(result), *after]:
        print(line)
    if result.stderr.strip():  # a sanitizer's report, or the device code's own logging
        print("the program wrote to stderr:")
        for line in result.stderr.strip().splitlines():
            print(f"  {line}")
    if args.save_outputs:
        for p in save_outputs(result, Path(args.save_outputs)):
            print(f"saved {p}")
    problems = []
    if result.status != 0:
        thread = ("" if result.failed_thread is None else
                  f" (first in thread {result.failed_thread} of {args.threads})")
        problems.append(f"the model returned {describe(result.status)}{thread}")
    elif result.mismatches():
        problems.append("outputs differ from the reference: " + ", ".join(result.mismatches()))
    if result.balanced():
        problems.append("device calls do not balance: " + ", ".join(result.balanced()))
    if unsound_threads(result.stdout):
        problems.append("threads not sound: " + ", ".join(map(str,
                                                              unsound_threads(result.stdout))))
    if problems:
        for problem in problems:
            print(f"FAIL: {problem}")
        return 1
    print("PASS")
    return 0


# --- inspect -------------------------------------------------------------------------

def cmd_inspect(args: argparse.Namespace) -> int:
    """``tvmdev inspect``: report on a firmware or program ELF."""
    found = inspect_elf(Path(args.elf), Path(args.model) if args.model else None)
    if args.json:
        print(json.dumps(found.to_json(), indent=2))
    else:
        for line in format_report(found):
            print(line)
    return 0 if found.ok else 1


# --- check ---------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    """``tvmdev check``: compare a device folder's sources with the generated API."""
    problems = check_folder(Path(args.folder))
    for p in problems:
        print(f"{args.folder.rstrip('/')}/{p}")
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
        return 1
    print("ok: every device and kernel function matches the generated API")
    return 0
