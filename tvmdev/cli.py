"""The command line: wires loaders, planners, the renderer and the writer together."""

from __future__ import annotations

import argparse
import gc
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__, platforms
from .errors import TvmdevError, UsageError

# Flags that change how a command runs, not what it generates: kept out of banners so
# that `--force` or `--dry-run` never changes a generated file's bytes.
_NOT_RECORDED = {"--force", "--dry-run", "--debug"}

Handler = Callable[[argparse.Namespace], int]


def recorded_command(argv: Sequence[str]) -> str:
    """The command line as written into banners: ``tvmdev new-device woofles ...``."""
    return "tvmdev " + shlex.join(a for a in argv if a not in _NOT_RECORDED)


def _print_report(lines: list[str], dry_run: bool) -> None:
    if dry_run:
        print("dry run: nothing written; would:")
    for line in lines:
        print(("  " if dry_run else "") + line)


# --- new-device ----------------------------------------------------------------------

def _platform_option_flags() -> dict[str, platforms.PlatformOption]:
    flags: dict[str, platforms.PlatformOption] = {}
    for plat in platforms.all_platforms().values():
        for opt in plat.options:
            flags.setdefault(opt.name, opt)
    return flags


def cmd_new_device(args: argparse.Namespace) -> int:
    from . import devicegen, writer
    from .devices import DeviceSpec, device_name

    name = device_name(args.name)
    chosen: list[str] = []
    for p in args.platform or []:
        if p in chosen:
            raise TvmdevError(f"--platform {p} is given twice",
                              hint="name each platform once")
        plat = platforms.get(p)
        if plat.builtin_kind and plat.builtin_kind != name:
            raise TvmdevError(f"platform {p} implements the built-in device kind "
                              f"'{plat.builtin_kind}', not '{name}'",
                              hint=f"tvmdev new-device {plat.builtin_kind} --platform {p}")
        chosen.append(p)
    if not chosen:
        raise UsageError("new-device needs at least one --platform (see: tvmdev list platforms)")
    options: dict[str, Any] = {}
    for oname, opt in _platform_option_flags().items():
        value = getattr(args, oname)
        if value is None:
            continue
        owners = [p for p in chosen if oname in {o.name for o in platforms.get(p).options}]
        if not owners:
            declared = [p.name for p in platforms.all_platforms().values()
                        if oname in {o.name for o in p.options}]
            raise TvmdevError(f"{opt.flag} applies to platform {', '.join(declared)}, "
                              "which is not selected",
                              hint=f"add --platform {declared[0]} or drop {opt.flag}")
        options[oname] = value
    from .ops import OPS
    ops = tuple(o for o in (args.ops if args.ops is not None else "gemm,matmul").split(",") if o)
    for o in ops:
        if o not in OPS:
            raise TvmdevError(f"--ops: unknown op '{o}'", hint="known ops: " + ", ".join(OPS))
    if len(set(ops)) != len(ops):
        raise TvmdevError("--ops names an op twice")
    spec = DeviceSpec(name=name, platforms=tuple(chosen), options=tuple(sorted(options.items())),
                      ops=ops, command=recorded_command(args.argv), given=args.name)
    out_dir = Path(args.output)
    writer.check_out_dir(out_dir)
    specs = devicegen.folder_specs(out_dir, spec)
    files = devicegen.generate(specs)
    report = writer.write(out_dir, files, devicegen.manifest_for(specs), force=args.force,
                          dry_run=args.dry_run)
    _print_report(report.lines(), args.dry_run)
    return 0


# --- aot and run ---------------------------------------------------------------------

def cmd_aot(args: argparse.Namespace) -> int:
    from . import aot, model, writer
    from .registry import build_registry, device_dir_libraries
    from .resources import templates_dir

    m = model.load(Path(args.model))
    device_dir = Path(args.device_dir) if args.device_dir else None
    registry = build_registry([Path(k) for k in args.kernels or []],
                              device_dir_libraries(device_dir, m.kinds) if device_dir else [])
    gen = aot.generate(m, registry, args.schedule, command=recorded_command(args.argv))
    portable = templates_dir() / "kernels/portable"
    copies = [(s, f"kernels/portable/{s.name}") for s in gen.sources()
              if s.parent == portable.resolve()]
    extra = [portable / "tvmk_portable.h"] + sorted(portable.glob("*.h"))
    copies += [(h, f"kernels/portable/{h.name}") for h in dict.fromkeys(extra)]
    out_dir = Path(args.output)
    files = list(gen.files) + writer.copy_files(copies)
    manifest = {"tool": "tvmdev", "model": m.name, "command": recorded_command(args.argv)}
    report = writer.write(out_dir, files, manifest, force=args.force, dry_run=args.dry_run)
    _print_report(report.lines(), args.dry_run)
    mem = gen.memory
    print(f"arena: {mem.arena_size} bytes (lower bound {mem.lower_bound}, "
          f"ratio {mem.ratio:.3f}); kernels: {', '.join(k.name for k in gen.kernels)}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from . import boards, model, runner

    m = model.load(Path(args.model))
    board = boards.get(args.board)
    build_dir = Path(args.build_dir or f"tvmdev-build/{m.name}-{board.name}")
    inputs = runner.load_inputs(m, Path(args.inputs) if args.inputs else None)
    runner.check_tools(board)
    prep = runner.prepare(m, board, build_dir, args.schedule,
                          Path(args.device_dir) if args.device_dir else None,
                          [Path(k) for k in args.kernels or []], inputs,
                          {"kleidiai": Path(args.kleidiai)} if args.kleidiai else None)
    if args.cpu:
        if board.run.get("method") != "qemu-user":
            raise TvmdevError(f"--cpu picks the CPU qemu-user emulates; board {board.name} "
                              "does not run under qemu-user")
        prep.cpu = args.cpu
    native = board.run.get("method") == "native"
    if not native and (args.threads > 1 or args.iterations > 1):
        raise TvmdevError(f"--threads and --iterations run on the host only, not on "
                          f"{board.name}")
    runner.build(prep, fault=None if native else args.fail)
    result = runner.execute(prep, inputs, fault=args.fail if native else None,
                            threads=args.threads, iterations=args.iterations)
    return _finish(args, m, result)


def _finish(args: argparse.Namespace, m: Any, result: Any) -> int:
    from . import runner
    from .status import describe

    print(f"model {m.name} on {args.board} ({args.schedule} schedule)")
    for line in runner.report(result):
        print(line)
    if args.save_outputs:
        for p in runner.save_outputs(result, m, Path(args.save_outputs)):
            print(f"saved {p}")
    problems = []
    if result.status != 0:
        problems.append(f"the model returned {describe(result.status)}")
    elif result.mismatches():
        problems.append("outputs differ from the reference: " + ", ".join(result.mismatches()))
    if result.balanced():
        problems.append("device calls do not balance: " + ", ".join(result.balanced()))
    if problems:
        for problem in problems:
            print(f"FAIL: {problem}")
        return 1
    print("PASS")
    return 0


# --- inspect -------------------------------------------------------------------------

def cmd_inspect(args: argparse.Namespace) -> int:
    from . import elf

    report = elf.inspect(Path(args.elf), Path(args.model) if args.model else None)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        for line in elf.format_report(report):
            print(line)
    return 0 if report.ok else 1


# --- check ---------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    from . import cparse

    problems = cparse.check_folder(Path(args.folder))
    for p in problems:
        print(f"{args.folder.rstrip('/')}/{p}")
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
        return 1
    print("ok: every device and kernel function matches the generated API")
    return 0


# --- list ----------------------------------------------------------------------------

def cmd_list(args: argparse.Namespace) -> int:
    if args.what == "platforms":
        plats = platforms.all_platforms()
        if args.json:
            print(json.dumps([{"name": p.name, "description": p.description,
                               "handle": p.handle_type,
                               "options": [o.flag for o in p.options]}
                              for p in plats.values()], indent=2))
            return 0
        width = max(len(n) for n in plats)
        for p in plats.values():
            flags = " ".join(o.flag for o in p.options)
            extra = f"  [{flags}]" if flags else ""
            print(f"{p.name:<{width}}  {p.description}{extra}")
        return 0
    if args.what == "kernels":
        return _list_kernels(args)
    if args.what == "boards":
        from . import boards
        all_b = boards.all_boards()
        if args.json:
            print(json.dumps([{"name": b.name, "description": b.description,
                               "platform": b.platform, "cpu": b.cpu,
                               "aliases": list(b.aliases)} for b in all_b.values()], indent=2))
            return 0
        width = max(len(n) for n in all_b)
        for b in all_b.values():
            alias = f" (also: {', '.join(b.aliases)})" if b.aliases else ""
            print(f"{b.name:<{width}}  {b.platform:<6}  {b.description}{alias}")
        return 0
    raise UsageError(f"cannot list '{args.what}'")


def _list_kernels(args: argparse.Namespace) -> int:
    """The merged kernel table: for each op, every kernel in the order it is tried."""
    from . import boards
    from .ops import OPS
    from .registry import build_registry, device_dir_libraries

    user = [Path(k) for k in args.kernels or []]
    if args.board:
        board = boards.get(args.board)
        user = [board.folder / k for k in board.kernels] + user
    device_dir = Path(args.device_dir) if args.device_dir else None
    registry = build_registry(user, device_dir_libraries(device_dir, _manifest_kinds(device_dir))
                              if device_dir else [])
    rows = []
    for lib in (*registry.user, *registry.device, registry.portable):
        for k in lib.kernels:
            meta = ("any" if k.arg_meta is None else
                    " ".join(f"{a}:{'|'.join(d)}" for a, d in k.arg_meta))
            scope = f"on {lib.kind} devices" if lib.kind else "everywhere"
            rows.append({"op": k.op, "kernel": k.name, "level": lib.level,
                         "library": lib.name, "scope": scope, "dtypes": meta,
                         "header": k.header})
    order = {o: i for i, o in enumerate(OPS)}
    level = {"user": 0, "device": 1, "portable": 2}
    rows.sort(key=lambda r: (order[r["op"]], level[r["level"]]))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    cols = ["op", "kernel", "level", "scope", "dtypes", "header"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
    return 0


def _manifest_kinds(device_dir: Path) -> list[str]:
    from . import writer
    return sorted(writer.read_manifest(device_dir).get("devices") or {})


# --- parser --------------------------------------------------------------------------

def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", choices=["eager", "lazy"], default="eager",
                   help="device activation: all up front (eager) or around each device's "
                        "first and last operator (lazy)")
    p.add_argument("--device-dir", metavar="DIR",
                   help="a folder made by new-device: its device code and kernels are used")
    p.add_argument("--kernels", action="append", metavar="FILE",
                   help="a user kernel library YAML (repeatable; takes precedence)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvmdev", allow_abbrev=False,
        description="Generate TVM's C Device API and AOT executors for accelerators, "
                    "then build and run them.",
        epilog="example: tvmdev new-device woofles --platform zephyr -o out/")
    parser.add_argument("--version", action="version", version=f"tvmdev {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    nd = sub.add_parser(
        "new-device", allow_abbrev=False, help="generate the C Device API of an accelerator",
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
    nd.add_argument("--force", action="store_true",
                    help="overwrite files you edited (your version is saved as .orig)")
    nd.add_argument("--dry-run", action="store_true", help="list what would be written")
    for oname, opt in _platform_option_flags().items():
        if opt.kind == "flag":
            nd.add_argument(opt.flag, dest=oname, action="store_const", const=True,
                            default=None, help=opt.help)
        else:
            nd.add_argument(opt.flag, dest=oname, choices=[c.value for c in opt.choices],
                            default=None, help=f"{opt.help} (default: {opt.default})")
    nd.set_defaults(handler=cmd_new_device)

    ao = sub.add_parser(
        "aot", allow_abbrev=False, help="generate the AOT executor of a model",
        description="Generate tvmgen_<model>.h/.c (the executor), its plan metadata and the "
                    "selected portable kernels.",
        epilog="example: tvmdev aot examples/mlp/mlp.yaml -o out/mlp --schedule lazy")
    ao.add_argument("model", help="the model description (YAML or JSON)")
    ao.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder")
    _model_options(ao)
    ao.add_argument("--force", action="store_true", help="overwrite files you edited")
    ao.add_argument("--dry-run", action="store_true", help="list what would be written")
    ao.set_defaults(handler=cmd_aot)

    rn = sub.add_parser(
        "run", allow_abbrev=False, help="build a model for a board, run it, check it",
        description="Generate the device code and the executor, build them for the board, "
                    "run the model and compare every output with a numpy reference.",
        epilog="example: tvmdev run examples/mlp/mlp.yaml --board host")
    rn.add_argument("model", help="the model description (YAML or JSON)")
    rn.add_argument("--board", default="host", help="the board (tvmdev list boards)")
    rn.add_argument("--inputs", metavar="DIR", help="read DIR/<input>.npy (default: seeded "
                    "random inputs)")
    rn.add_argument("--save-outputs", metavar="DIR", help="save DIR/<output>.npy")
    rn.add_argument("--build-dir", metavar="DIR",
                    help="build folder (default: tvmdev-build/<model>-<board>)")
    _model_options(rn)
    rn.add_argument("--fail", metavar="FN:N:CODE",
                    help="simulated devices: make the Nth call of FN (activate, open, "
                         "operator, close, deactivate) return CODE")
    rn.add_argument("--cpu", help="qemu-user boards: the CPU to emulate (for example "
                    "cortex-a53, which lacks dotprod, i8mm and SME)")
    rn.add_argument("--kleidiai", metavar="PATH",
                    help="a KleidiAI source tree (default: $KLEIDIAI_SOURCE_DIR; without one, "
                         "tvmdev's reference micro-kernels stand in)")
    rn.add_argument("--threads", type=int, default=1, help="run in THREADS threads at once")
    rn.add_argument("--iterations", type=int, default=1, help="runs per thread")
    rn.set_defaults(handler=cmd_run)

    ins = sub.add_parser(
        "inspect", allow_abbrev=False, help="check a firmware ELF: device API, kernels, heap",
        description="Check that every device function of the model's device kinds is "
                    "defined, that exactly the selected kernels are linked and that nothing "
                    "pulls in the heap; show the footprint by component.",
        epilog="example: tvmdev inspect tvmdev-build/mlp-host/mlp --model "
               "tvmdev-build/mlp-host")
    ins.add_argument("elf", help="the firmware or host program (ELF)")
    ins.add_argument("--model", metavar="DIR",
                     help="the folder tvmdev aot wrote (or a tvmdev run build folder)")
    ins.add_argument("--json", action="store_true", help="machine-readable output")
    ins.set_defaults(handler=cmd_inspect)

    ck = sub.add_parser(
        "check", allow_abbrev=False, help="check your device code against the generated API",
        description="Parse the device and kernel sources of a new-device folder and report "
                    "every function whose signature no longer matches the generated headers "
                    "or the kernel registry, and every missing device function.",
        epilog="example: tvmdev check out/")
    ck.add_argument("folder", help="a folder made by tvmdev new-device")
    ck.set_defaults(handler=cmd_check)

    ls = sub.add_parser("list", allow_abbrev=False, help="list platforms, boards or kernels",
                        epilog="example: tvmdev list platforms")
    ls.add_argument("what", choices=["platforms", "boards", "kernels"])
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.add_argument("--board", help="kernels: include the board's kernel libraries")
    ls.add_argument("--device-dir", metavar="DIR",
                    help="kernels: include the device kinds' libraries of a new-device folder")
    ls.add_argument("--kernels", action="append", metavar="FILE",
                    help="kernels: include a user library (repeatable)")
    ls.set_defaults(handler=cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # A short-lived batch process: the cyclic garbage collector only costs time here
    # (it scans the large model graphs over and over while they are built).
    gc.disable()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
    except TvmdevError as exc:  # a broken platform.yaml of the installation
        print(f"tvmdev: {exc}", file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    args.argv = argv
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        handler: Handler = args.handler
        return handler(args)
    except TvmdevError as exc:
        if args.debug:
            raise
        print(f"tvmdev: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
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


if __name__ == "__main__":
    sys.exit(main())
