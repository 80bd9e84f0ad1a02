"""``tvmdev list``: platforms, boards and the merged kernel table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import UsageError
from ..load.board import all_boards, board_by_name
from ..load.kernel_tree import TreeLibrary, board_library
from ..load.platform import all_platforms
from ..model.custom import CustomScratch
from ..model.ops import OPS
from ..plan.kernels import build_registry, device_dir_libraries
from ..render.device import user_device_specs


def cmd_list(args: argparse.Namespace) -> int:
    """``tvmdev list``: platforms, boards or the merged kernel table."""
    if args.what == "platforms":
        plats = all_platforms()
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
        return _list_boards(args)
    raise UsageError(f"cannot list '{args.what}'")


def _list_kernels(args: argparse.Namespace) -> int:
    """The merged kernel table: for each op, every kernel in the order it is tried."""

    user = [Path(k) for k in args.kernels or []]
    boards: list[TreeLibrary] = []
    if args.board:
        board = board_by_name(args.board)
        user = [*board.kernels, *user]
        boards = [board_library(name) for name in board.libraries]
    device_dir = Path(args.device_dir) if args.device_dir else None
    registry = build_registry(user, device_dir_libraries(
        device_dir, sorted(s.name for s in user_device_specs(device_dir))) if device_dir else [])
    rows = []
    with_tree = {t.name for t in boards if t.tree is not None}
    for lib in (*registry.user, *registry.device, *(t.kernels for t in boards),
                registry.portable):
        for k in lib.kernels:
            meta = ("any" if k.arg_meta is None else
                    " ".join(f"{a}:{'|'.join(d)}" for a, d in k.arg_meta))
            scope = (f"on {lib.kind} devices" if lib.kind else
                     f"on {args.board} (int8, with a tree)" if lib.name in with_tree else
                     f"on {args.board} (int8)" if lib.level == "board" else
                     "everywhere")
            scratch = ("-" if k.scratch is None else k.scratch if isinstance(k.scratch, str)
                       else repr(k.scratch.rule.text) if isinstance(k.scratch, CustomScratch)
                       else f"{k.scratch} bytes")
            if k.buffer:
                scratch = f"{lib.name}'s own ({k.buffer})"
            rows.append({"op": k.op, "kernel": k.name, "level": lib.level,
                         "library": lib.name, "scope": scope, "dtypes": meta,
                         "header": k.header, "scratch": scratch})
    order = {o: i for i, o in enumerate(OPS)}
    level = {"user": 0, "device": 1, "board": 2, "portable": 3}
    rows.sort(key=lambda r: (order[r["op"]], level[r["level"]]))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    cols = ["op", "kernel", "level", "scope", "dtypes", "header", "scratch"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
    return 0


def _list_boards(args: argparse.Namespace) -> int:
    """Every board, with where it came from (built-in, a TVMDEV_BOARD_PATH folder)."""
    boards = dict(sorted(all_boards().items()))
    if args.json:
        print(json.dumps([{"name": b.name, "description": b.description,
                           "platform": b.platform, "cpu": b.cpu, "method": b.run.method,
                           "aliases": list(b.aliases), "origin": b.origin,
                           "path": str(b.path),
                           # the memory map: the program's code and ram regions, then the
                           # others (tvmdev aot/run --place-memory POOL=REGION)
                           "regions": [{"name": r.name, "origin": r.origin,
                                        "length": r.length, "kind": r.kind, "rank": r.rank,
                                        "masters": list(r.masters)}
                                       for r in (b.memory.regions if b.memory else ())]}
                          for b in boards.values()], indent=2))
        return 0
    width = max(len(n) for n in boards)
    for b in boards.values():
        alias = f" (also: {', '.join(b.aliases)})" if b.aliases else ""
        origin = "" if b.origin == "built-in" else f" [from {b.path}]"
        print(f"{b.name:<{width}}  {b.platform:<8}  {b.description}{alias}{origin}")
    return 0
