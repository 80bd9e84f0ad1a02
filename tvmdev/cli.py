"""The command line: wires loaders, planners, the renderer and the writer together."""

from __future__ import annotations

import argparse
import json
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
        platforms.get(p)
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
    ops = tuple(o for o in (args.ops or "gemm,matmul").split(",") if o)
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
    raise UsageError(f"cannot list '{args.what}'")


# --- parser --------------------------------------------------------------------------

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

    ls = sub.add_parser("list", allow_abbrev=False, help="list platforms, boards or kernels",
                        epilog="example: tvmdev list platforms")
    ls.add_argument("what", choices=["platforms"])
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(handler=cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
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


if __name__ == "__main__":
    sys.exit(main())
