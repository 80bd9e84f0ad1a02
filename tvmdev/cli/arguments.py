"""What ``aot`` and ``run`` take from their arguments: the command recorded in banners
(never a machine's path or the output folder) and the pipeline's options."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path

from ..errors import TvmdevError
from ..load.board import board_by_name
from ..load.device_layouts import load_layouts
from ..load.kernel_tree import OFF
from ..plan.memory_map import parse_places
from ..plan.pipeline import Options
from ..render.device import user_device_specs

# Flags that change how a command runs, not what it generates, and the output folder:
# kept out of banners, so that `--force`, `--dry-run` or the spelling of `-o` never
# changes a generated file's bytes.
_NOT_RECORDED = {"--force", "--dry-run", "--debug"}
_OUTPUT = {"-o", "--output"}


def recorded_command(argv: Sequence[str]) -> str:
    """The command line as written into banners, without the output folder:
    ``tvmdev new-device woofles --platform zephyr``."""
    kept: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in _OUTPUT:
            skip = True
        elif a not in _NOT_RECORDED and not a.startswith(("--output=", "-o")):
            kept.append(a)
    return "tvmdev " + shlex.join(kept)


def model_command(model: Path, args: argparse.Namespace) -> str:
    """The banner of generated model code: the ``tvmdev aot`` command that regenerates
    it, with the model's file name and the options that change the output, never a
    machine's path (nanopb records the same). ``aot`` and ``run`` record the same."""
    parts = ["tvmdev", "aot", model.name]
    for flag in ("name", "input_shape", "device", "place"):
        for value in _listed(getattr(args, flag, None)):
            parts += ["--" + flag.replace("_", "-"), value]
    if args.schedule != "eager":
        parts += ["--schedule", args.schedule]
    for k in args.kernels or []:
        parts += ["--kernels", Path(k).name]
    if args.device_dir:
        parts += ["--device-dir", Path(args.device_dir).name]
    if getattr(args, "board", None) and Path(args.board).stem != "host":
        parts += ["--board", Path(args.board).name]
    if getattr(args, "cmsis_nn", None) == OFF:
        parts += ["--cmsis-nn", OFF]
    if not getattr(args, "fold_pads", True):
        parts += ["--no-fold-pads"]
    if not getattr(args, "fuse", True):
        parts += ["--no-fuse"]
    if not getattr(args, "inplace", True):
        parts += ["--no-inplace"]
    if getattr(args, "patch", None):
        parts += ["--patch", args.patch]
    if getattr(args, "patch_budget", 1.10) != 1.10:
        parts += ["--patch-budget", f"{args.patch_budget:g}"]
    if getattr(args, "io", None):
        parts += ["--io", args.io]
    for value in _listed(getattr(args, "place_memory", None)):
        parts += ["--place-memory", value]
    return shlex.join(parts)


def _listed(value: object) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def compile_options(args: argparse.Namespace, run: bool) -> Options:
    """The pipeline's options from ``aot``'s or ``run``'s arguments (``run``: device kinds
    without the user's implementation run as tvmdev's stand-in, with its kernels)."""
    device_dir = Path(args.device_dir) if args.device_dir else None
    if getattr(args, "patch_budget", 1.10) < 1.0:
        raise TvmdevError(f"--patch-budget {args.patch_budget:g}: patching only adds work, "
                          "so the budget is a ratio of at least 1.0",
                          hint="give 1.10 for 10% more instructions, or --patch off")
    specs = user_device_specs(device_dir) if device_dir is not None else ()
    return Options(args.schedule, tuple(Path(k) for k in args.kernels or []), device_dir,
                   specs,
                   (("cmsis_nn", args.cmsis_nn),) if getattr(args, "cmsis_nn", None) else (),
                   stand_in_kernels=run, fold_pads=getattr(args, "fold_pads", True),
                   fuse=getattr(args, "fuse", True),
                   inplace=getattr(args, "inplace", True),
                   # the user's kinds that declare memory of their own (their manifest)
                   device_memory=tuple((s.name, s.memory) for s in specs if s.memory),
                   place_memory=parse_places(getattr(args, "place_memory", None)),
                   io=getattr(args, "io", None), patch=getattr(args, "patch", None),
                   patch_budget=getattr(args, "patch_budget", 1.10),
                   device_boards=_device_boards(getattr(args, "coprocessor", None)),
                   # how the user's kinds with memory want their constants laid out
                   device_layouts=load_layouts(device_dir, [s.name for s in specs if s.memory])
                   if device_dir is not None else ())


def _device_boards(given: str | None) -> tuple[tuple[str, str], ...]:
    """``--coprocessor ID=BOARD`` as (device, board), for the plan's scratch; a malformed
    one is refused once the model is known (run.coproc.check)."""
    name, sep, board = (given or "").partition("=")
    if not (sep and name and board):
        return ()
    try:
        board_by_name(board)
    except TvmdevError:
        return ()  # refused, with the boards known, by run.coproc.check
    return ((name, board),)
