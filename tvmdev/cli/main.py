"""The command line: the parser, and ``main``, which turns errors into exit codes."""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import TvmdevError, UsageError, one_line, shown
from ..frontends.custom_codes import custom_operators
from .commands import (
    cmd_aot,
    cmd_check,
    cmd_inspect,
    cmd_new_device,
    cmd_run,
    platform_option_flags,
)
from .importing import add_import_options, cmd_import
from .listing import cmd_list

Handler = Callable[[argparse.Namespace], int]
# The simulated device functions a fault can hit (runtime/sim/tvmdev_sim.h); the last three
# only on a device with memory of its own.
FAIL_FUNCTIONS = ("activate", "open", "operator", "close", "deactivate", "copy_to",
                  "copy_from", "wait")


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not an integer") from None
    if not 1 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and 1000000")
    return value


def fail_spec(text: str) -> str:
    """An argparse type: ``FN:N:CODE``, a simulated device failure."""
    m = re.fullmatch(r"([a-z_]+):([0-9]{1,10}):(-?[0-9]{1,12})", text)
    if (not m or m.group(1) not in FAIL_FUNCTIONS or int(m.group(2)) < 1
            or not -(2**31) <= int(m.group(3)) < 2**31 or int(m.group(3)) == 0):
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not FN:N:CODE (FN one of {', '.join(FAIL_FUNCTIONS)}; N >= 1; "
            "CODE a non-zero int32, for example open:2:-5)")
    return text


# --- parser --------------------------------------------------------------------------

def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", choices=["eager", "lazy"], default="eager",
                   help="device activation: all up front (eager) or around each device's "
                        "first and last operator (lazy)")
    p.add_argument("--device-dir", metavar="DIR",
                   help="a folder made by new-device: its device code and kernels are used")
    p.add_argument("--kernels", action="append", metavar="FILE",
                   help="a user kernel library YAML (repeatable; takes precedence)")
    p.add_argument("--no-fold-pads", dest="fold_pads", action="store_false",
                   help="run every PAD as its own operator (default: a PAD whose padding "
                        "its convolution or max pool computes exactly is folded into it)")
    p.add_argument("--no-fuse", dest="fuse", action="store_false",
                   help="run every operator as its own (default: an int8 conv2d whose "
                        "output only an ADD reads is fused with it, and a depthwise_conv2d "
                        "whose output only a 1x1 conv2d reads with that, where it does not "
                        "lose)")
    p.add_argument("--no-inplace", dest="inplace", action="store_false",
                   help="give every operator's output a buffer of its own (default: an "
                        "operator whose kernels allow it writes over an input that dies "
                        "there, and a reshape of such an input is a view, with no call)")
    p.add_argument("--patch", choices=["auto", "off"],
                   help="patch-based inference: run the early stages of a CNN band by band "
                        "of rows where that lowers the peak RAM within --patch-budget "
                        "(auto), or never (off) (default: the board's patch:, auto on the "
                        "bare-metal boards, off elsewhere)")
    p.add_argument("--patch-budget", type=float, default=1.10, metavar="RATIO",
                   help="the most work patching may add, as a ratio over the unpatched "
                        "plan's (default 1.10: 10%% more)")
    p.add_argument("--io", choices=["workspace", "caller"],
                   help="the model's inputs and outputs: planned in the workspace (the "
                        "caller fills and reads the pointers tvmgen_<model>_map_inputs and "
                        "_map_outputs give) or the caller's buffers (default: the board's "
                        "io:, workspace on the bare-metal boards, caller elsewhere)")
    p.add_argument("--place-memory", action="append", metavar="POOL=REGION",
                   help="put a pool (workspace, constants) in a region of the board's "
                        "memory map, for example workspace=sram,constants=qspi (default: "
                        "the fastest region that holds it)")


def _cmsis_nn_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cmsis-nn", metavar="PATH",
                   help="a CMSIS-NN tree (v7.0.0) for boards that list the cmsis_nn library, "
                        "or 'off' (default: $CMSIS_NN_SOURCE_DIR; without one, int8 "
                        "operators run on the portable kernels)")


def _add_new_device(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev new-device``: the C Device API of an accelerator."""
    nd = sub.add_parser(
        "new-device", allow_abbrev=False, parents=[common],
        help="generate the C Device API of an accelerator",
        description="Generate the C Device API (struct tvm_device_<name>_t and "
                    "TVMDevice<Name>Init/Activate/Open/Close/Deactivate/Destroy) for one or "
                    "more platforms.",
        epilog="example: tvmdev new-device uart_accel --platform cmsis --platform posix -o out/")
    nd.add_argument("name", help="the accelerator's name, lower snake_case (woofles, ethos_u)")
    nd.add_argument("--platform", "-p", action="append", metavar="PLATFORM",
                    help="a platform to generate for; repeatable (tvmdev list platforms)")
    nd.add_argument("-o", "--output", default=".", metavar="DIR",
                    help="output folder (default: the current folder)")
    nd.add_argument("--ops", metavar="OP,OP",
                    help="operators the device's kernel library claims (default: gemm,matmul)")
    nd.add_argument("--memory", metavar="SIZE[:ALIGN]",
                    help="the device has memory of its own: SIZE bytes (K, M), addresses "
                         "aligned to ALIGN (default 16); adds CopyTo, CopyFrom and Wait "
                         "(example: --memory 256K:32)")
    nd.add_argument("--force", action="store_true",
                    help="overwrite files you edited (your version is saved as .orig)")
    nd.add_argument("--dry-run", action="store_true", help="list what would be written")
    for oname, opt in platform_option_flags().items():
        if opt.kind == "flag":
            nd.add_argument(opt.flag, dest=oname, action="store_const", const=True,
                            default=None, help=opt.help)
        elif opt.kind == "string":
            nd.add_argument(opt.flag, dest=oname, metavar=oname.upper(), default=None,
                            help=f"{opt.help} (default: {opt.default})")
        else:
            nd.add_argument(opt.flag, dest=oname, choices=[c.value for c in opt.choices],
                            default=None, help=f"{opt.help} (default: {opt.default})")
    nd.set_defaults(handler=cmd_new_device)


def _add_aot(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev aot``: the executor of a model."""
    ao = sub.add_parser(
        "aot", allow_abbrev=False, parents=[common],
        help="generate the AOT executor of a model",
        description="Generate tvmgen_<model>.h/.c (the executor), its plan metadata and the "
                    "selected portable kernels.",
        epilog="example: tvmdev aot examples/mlp/mlp.yaml -o out/mlp --schedule lazy")
    ao.add_argument("model", help="the model: a description (YAML or JSON), a .tflite or "
                    "a .onnx")
    ao.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder")
    _model_options(ao)
    add_import_options(ao)
    ao.add_argument("--board", help="plan for this board: its kernel tuning and kernel "
                    "libraries (default: none, the portable kernels as tuned off Cortex-M)")
    _cmsis_nn_option(ao)
    ao.add_argument("--rtos", metavar="KERNEL",
                    help="cmsis boards: add the glue of a CMSIS-RTOS2 kernel, rtx5 or "
                         "freertos, and a CMake library of it built from the kernel's trees "
                         "(rtos/; default: the board's rtos:, else none)")
    ao.add_argument("--show-plan", action="store_true",
                    help="print the memory plan: a line per operator, the workspace across "
                         "(tvmgen_<model>_plan.svg draws it)")
    ao.add_argument("--force", action="store_true", help="overwrite files you edited")
    ao.add_argument("--dry-run", action="store_true", help="list what would be written")
    ao.set_defaults(handler=cmd_aot)


def _add_run(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev run``: build, run and check a model on a board."""
    rn = sub.add_parser(
        "run", allow_abbrev=False, parents=[common],
        help="build a model for a board, run it, check it",
        description="Generate the device code and the executor, build them for the board, "
                    "run the model and compare every output with a numpy reference.",
        epilog="example: tvmdev run examples/mlp/mlp.yaml --board host")
    rn.add_argument("model", help="the model: a description (YAML or JSON), a .tflite or "
                    "a .onnx")
    rn.add_argument("--board", default="host",
                    help="a board name (tvmdev list boards) or a board file")
    rn.add_argument("--inputs", metavar="DIR", help="read DIR/<input>.npy (default: seeded "
                    "random inputs)")
    rn.add_argument("--save-outputs", metavar="DIR", help="save DIR/<output>.npy")
    rn.add_argument("--build-dir", metavar="DIR",
                    help="build folder (default: tvmdev-build/<model>-<board>)")
    _model_options(rn)
    add_import_options(rn)
    rn.add_argument("--fail", metavar="FN:N:CODE", type=fail_spec,
                    help="simulated devices: make the Nth call of FN (activate, open, "
                         "operator, close, deactivate; with memory also copy_to, "
                         "copy_from, wait) return CODE")
    rn.add_argument("--cpu", help="qemu-user boards: the CPU to emulate (for example "
                    "cortex-a53, which lacks dotprod, i8mm and SME)")
    rn.add_argument("--kleidiai", metavar="PATH",
                    help="a KleidiAI source tree (default: $KLEIDIAI_SOURCE_DIR; without one, "
                         "tvmdev's reference micro-kernels stand in)")
    _cmsis_nn_option(rn)
    rn.add_argument("--cflags", metavar="FLAGS", default=os.environ.get("TVMDEV_CFLAGS"),
                    help="C compiler flags added to the board's, for example "
                         "'-fsanitize=address,undefined' (default: $TVMDEV_CFLAGS)")
    rn.add_argument("--threads", type=positive_int, default=1,
                    help="run in THREADS threads at once")
    rn.add_argument("--iterations", type=positive_int, default=1, help="runs per thread")
    rn.add_argument("--rtos", metavar="KERNEL",
                    help="qemu-system boards: run the firmware on a CMSIS-RTOS2 kernel, rtx5 "
                         "or freertos, built from its pinned trees (default: the board's "
                         "rtos:, else none)")
    rn.add_argument("--device-option", action="append", metavar="NAME=VALUE", default=[],
                    help="an option of the simulated devices the run generates, as "
                         "new-device takes it: cmsis_driver=spi (repeatable)")
    rn.add_argument("--instructions", action="store_true",
                    help="qemu-system boards: count the instructions of the inference, "
                         "deterministically (QEMU -icount and SysTick)")
    rn.add_argument("--per-operator", action="store_true",
                    help="with --instructions: also each operator's instructions, recorded "
                         "by the executor's TRACE hook (bare-metal qemu-system boards)")
    rn.add_argument("--coprocessor", metavar="ID=BOARD",
                    help="run device ID (a --device-dir kind with memory, examples/uart_npu) "
                         "on tvmdev's co-processor firmware on qemu-system board BOARD, its "
                         "UART joined to the main board's (ID's operators get scratch for "
                         "BOARD's kernels too): --coprocessor npu0=mps3_an547")
    rn.set_defaults(handler=cmd_run)


def _add_import(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev import``: a .tflite or .onnx model as a model description."""
    im = sub.add_parser(
        "import", allow_abbrev=False, parents=[common],
        help="import a .tflite or .onnx model as a model description",
        description="Write DIR/<name>.yaml (the model description tvmdev reads) and its "
                    "constants as .npy files beside it; print the inputs, outputs and "
                    "operators.",
        epilog="example: tvmdev import sine_float.tflite -o out/sine --device npu0:woofles "
               "--place fully_connected=npu0")
    im.add_argument("model", help="the model file (.tflite or .onnx)")
    im.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder")
    add_import_options(im)
    im.add_argument("--kernels", action="append", metavar="FILE",
                    help="a kernel library whose custom operators the model uses (repeatable)")
    im.add_argument("--force", action="store_true", help="overwrite files you edited")
    im.add_argument("--dry-run", action="store_true", help="list what would be written")
    im.set_defaults(handler=cmd_import)


def _add_inspect(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev inspect``: check a firmware ELF."""
    ins = sub.add_parser(
        "inspect", allow_abbrev=False, parents=[common],
        help="check a firmware ELF: device API, kernels, heap",
        description="Check that every device function of the model's device kinds is "
                    "defined, that exactly the selected kernels are linked and that nothing "
                    "pulls in the heap; show the footprint by component.",
        epilog="example: tvmdev inspect tvmdev-build/mlp-host/mlp.out --model "
               "tvmdev-build/mlp-host")
    ins.add_argument("elf", help="the firmware or host program (ELF)")
    ins.add_argument("--model", metavar="DIR",
                     help="the folder tvmdev aot wrote (or a tvmdev run build folder)")
    ins.add_argument("--json", action="store_true", help="machine-readable output")
    ins.set_defaults(handler=cmd_inspect)


def _add_check(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev check``: user code against the generated API."""
    ck = sub.add_parser(
        "check", allow_abbrev=False, parents=[common],
        help="check your device code against the generated API",
        description="Parse the device and kernel sources of a new-device folder and report "
                    "every function whose signature no longer matches the generated headers "
                    "or the kernel registry, and every missing device function.",
        epilog="example: tvmdev check out/")
    ck.add_argument("folder", help="a folder made by tvmdev new-device")
    ck.set_defaults(handler=cmd_check)


def _add_list(sub: Any, common: argparse.ArgumentParser) -> None:
    """``tvmdev list``: platforms, boards, kernels."""
    ls = sub.add_parser(
        "list", allow_abbrev=False, parents=[common],
        help="list platforms, boards or kernels", epilog="example: tvmdev list platforms")
    ls.add_argument("what", choices=["platforms", "boards", "kernels"])
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.add_argument("--board", help="kernels: include the board's kernel libraries")
    ls.add_argument("--device-dir", metavar="DIR",
                    help="kernels: include the device kinds' libraries of a new-device folder")
    ls.add_argument("--kernels", action="append", metavar="FILE",
                    help="kernels: include a user library (repeatable)")
    ls.set_defaults(handler=cmd_list)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="tvmdev", allow_abbrev=False,
        description="Generate TVM's C Device API and AOT executors for accelerators, "
                    "then build and run them.",
        epilog="example: tvmdev new-device woofles --platform zephyr -o out/")
    parser.add_argument("--version", action="version", version=f"tvmdev {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    # --debug is also accepted after the subcommand (tvmdev run --debug ...).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (_add_new_device, _add_import, _add_aot, _add_run, _add_inspect, _add_check,
                _add_list):
        add(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run tvmdev with ``argv`` (default: the process's arguments); the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # The cyclic garbage collector only costs time here (it scans the large model graphs
    # over and over while they are built); it is back on when main returns.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv)
    finally:
        if was_enabled:
            gc.enable()


def _main(argv: list[str]) -> int:
    try:
        parser = build_parser()
    except TvmdevError as exc:  # a broken platform.yaml of the installation
        _print_error(exc)
        return 1
    args = parser.parse_args(argv)
    args.argv = argv
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        handler: Handler = args.handler
        with warnings.catch_warnings():
            # tvmdev reports every problem itself, in one line; a library's warning would
            # only add noise (shown with --debug, or with python -W).
            if not (args.debug or sys.warnoptions):
                warnings.simplefilter("ignore")
            # The custom operators of the --kernels files, known while the command runs.
            with custom_operators([Path(k) for k in getattr(args, "kernels", None) or []]):
                return handler(args)
    except TvmdevError as exc:
        if args.debug:
            raise
        _print_error(exc)
        return 1
    except UsageError as exc:
        if args.debug:
            raise
        print(f"tvmdev: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _print_error(exc: TvmdevError) -> None:
    """``tvmdev: file:line: message`` on one line, the tool output it carries (a
    compiler's log) indented below it, line by line, then the hint."""
    lines = [f"tvmdev: {exc}", *exc.log_lines()]
    if exc.hint:
        lines.append(f"  hint: {one_line(exc.hint)}")
    print("\n".join(lines), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
