"""cmsis_nn_bench.py's tables: the speed, arena and code table per board, PAD first, issue
25's table (tvmdev beside TFLM+CMSIS-NN and TinyEngine: instructions and flash, with
ratios) and the breakdown of the Unicorn profiles (per operator kind, per library, per
instruction class)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import _icount
from _profile import CLASSES

PAD_RUNS = ("kept", "baseline")


def fmt(value: int | None, width: int) -> str:
    return f"{value:>{width},}" if value is not None else f"{'-':>{width}}"


def te_cell(m: Any, width: int = 12, what: str = "instructions") -> str:
    """TinyEngine's figure, marked * when its outputs are not TFLM's."""
    v = None if m is None else getattr(m, what)
    if v is None:
        return f"{'-':>{width}}"
    return f"{f'{v:,}' + ('*' if m.reason else ''):>{width}}"


def ratio(a: int | None, b: int | None, width: int = 7) -> str:
    return f"{a / b:>{width - 1}.2f}x" if a and b else f"{'-':>{width}}"


def table(cells: list[Any]) -> None:
    """Per board: portable and cmsis_nn instructions, TFLM's and TinyEngine's, arenas and
    code (the bench's first table)."""
    from cmsis_nn_bench import Measure
    for board in dict.fromkeys(c.board for c in cells):
        rows = [c for c in cells if c.board == board]
        res = _icount.resolution(board)
        print(f"\n{board}: instructions per inference (QEMU -icount, ±{res}), arena and "
              "code (executor + kernels, no weights) in bytes")
        print(f"{'model':<21} {'portable':>12} {'cmsis_nn':>11} {'port/cn':>7} "
              f"{'TFLM+CN':>11} {'TFLM/cn':>7} {'TE int':>12} {'TE fp':>12} | "
              f"{'arena p':>8} {'arena cn':>8} "
              f"{'cn+I/O':>7} {'TFLM':>7} | {'code p':>7} {'code cn':>7} {'TFLM':>7}")
        for c in rows:
            p, n, t = c.tvmdev.get("portable", Measure()), c.tvmdev["cmsis_nn"], c.tflm
            io = n.arena + n.io if n.arena is not None and n.io is not None else None
            print(f"{c.model:<21} {fmt(p.instructions, 12)} {fmt(n.instructions, 11)} "
                  f"{ratio(p.instructions, n.instructions)} {fmt(t.instructions, 11)} "
                  f"{ratio(t.instructions, n.instructions)} "
                  f"{te_cell(c.tinyengine.get('integer'))} {te_cell(c.tinyengine.get('float'))} "
                  f"| {fmt(p.arena, 8)} {fmt(n.arena, 8)} {fmt(io, 7)} {fmt(t.arena, 7)} | "
                  f"{fmt(p.code, 7)} {fmt(n.code, 7)} {fmt(t.code, 7)}")
    pad_table(cells)
    print("\nport/cn: portable / cmsis_nn instructions (issue 15's target: >= 3x on M4 for "
          "keyword_spotting and image_classification, more on M55); TFLM/cn: TFLM+CMSIS-NN "
          "/ tvmdev cmsis_nn (> 1: tvmdev runs fewer)")


def notes(cells: list[Any]) -> None:
    """Why a figure is missing, Unicorn's checks, the kernels each run chose."""
    print()
    for c in cells:
        for kind, m in [*c.tvmdev.items(), ("TFLM", c.tflm),
                        *((f"TinyEngine {k}", v) for k, v in c.tinyengine.items())]:
            where = f"{c.model} on {c.board}, {kind}"
            if m.reason is not None:
                print(f"{where}: {m.reason}")
            if m.check:
                print(f"{where}: Unicorn check {m.check}")
            if kind == "cmsis_nn" and m.kernels:
                print(f"{where}: kernels {m.kernels}")
        for who, p in c.profiles.items():
            if not isinstance(p, str) and p.measured is not None:
                what = ("its rows, hooks out" if "trace" in who else "Unicorn's profile")
                print(f"{c.model} on {c.board}, {who}: {what} {p.total:,} "
                      f"instructions, -icount {p.measured:,} ({p.total - p.measured:+,})")


def goals_table(cells: list[Any]) -> None:
    """Issue 25's done-when: tvmdev (the board's libraries, CMSIS-NN's tree) beside
    TFLM+CMSIS-NN and TinyEngine, instructions and flash, measured in this run."""
    print("\nIssue 25: tvmdev (board's libraries) vs TFLM+CMSIS-NN and TinyEngine "
          "(integer / float requantization); instructions per inference (QEMU -icount); "
          "flash: the ELF's loaded bytes less the input array, the same for all "
          "(code, constants or .tflite, startup, UART, libc); * = outputs not TFLM's")
    print(f"{'model':<21} {'board':<11} {'tvmdev':>11} {'TFLM+CN':>11} {'tv/TFLM':>7} "
          f"{'TE int':>12} {'tv/TEi':>6} {'TE fp':>12} {'tv/TEf':>6} | {'flash tv':>9} "
          f"{'TFLM':>9} {'tv/TFLM':>7} {'TE int':>10} {'TE fp':>10} | exact")
    for c in cells:
        n, t = c.tvmdev["cmsis_nn"], c.tflm
        ti, tf = c.tinyengine.get("integer"), c.tinyengine.get("float")
        exact = "yes" if n.instructions is not None else "-"
        print(f"{c.model:<21} {c.board:<11} {fmt(n.instructions, 11)} "
              f"{fmt(t.instructions, 11)} {ratio(n.instructions, t.instructions)} "
              f"{te_cell(ti)} {ratio(n.instructions, ti and ti.instructions, 6)} "
              f"{te_cell(tf)} {ratio(n.instructions, tf and tf.instructions, 6)} | "
              f"{fmt(n.flash, 9)} {fmt(t.flash, 9)} {ratio(n.flash, t.flash)} "
              f"{te_cell(ti, 10, 'flash')} {te_cell(tf, 10, 'flash')} | {exact}")
    print("tv/TFLM, tv/TEi, tv/TEf: tvmdev / the peer (< 1: tvmdev smaller); issue 25's "
          "goals: instructions <= 0.75x TFLM's, < TinyEngine integer's where it is exact, "
          "<= 1.05x its float build's; flash <= TFLM's. tvmdev's figures are PASS runs "
          "(every output bit-exact with TFLM's interpreter)")
    print("\nflash by part: tvmdev code (executor text and data, kernels) and constants "
          "(weights, per-layer params), TFLM code (interpreter, kernels, CMSIS-NN) and "
          "its .tflite")
    print(f"{'model':<21} {'board':<11} {'tv code':>8} {'tv const':>9} {'TFLM code':>9} "
          f"{'.tflite':>9}")
    for c in cells:
        n, t = c.tvmdev["cmsis_nn"], c.tflm
        print(f"{c.model:<21} {c.board:<11} {fmt(n.own_code, 8)} {fmt(n.consts, 9)} "
              f"{fmt(t.own_code, 9)} {fmt(t.consts, 9)}")


def profile_table(cells: list[Any]) -> None:
    """The Unicorn breakdowns (--profile): per operator kind, per library, per class."""
    rows = [(c, who, p) for c in cells for who, p in c.profiles.items()]
    if not rows:
        return
    print("\nWhere the instructions go (Unicorn, every executed block counted, classed "
          "by objdump's mnemonics: benchmarks/_profile.py; on the M55, which Unicorn cannot "
          "run, tvmdev's own run per operator, 'tvmdev (trace)': tvmdev run "
          "--per-operator), millions of instructions")
    for title, attr in (("operator kind", "by_kind"), ("library", "by_library"),
                        ("instruction class", "by_class")):
        keys: Counter[str] = Counter()
        for _, _, p in rows:
            if not isinstance(p, str):
                keys.update(getattr(p, attr))
        order = [k for k in CLASSES if k in keys] if attr == "by_class" else [
            k for k, _ in keys.most_common()]
        print(f"\nby {title}")
        print(f"{'model':<14} {'board':<11} {'run':<14} {'total':>7} "
              + " ".join(f"{k[:9]:>9}" for k in order))
        for c, who, p in rows:
            if attr == "by_class" and not isinstance(p, str) and not p.by_class:
                continue  # a per-operator count has no instruction classes
            if isinstance(p, str):
                print(f"{c.model[:14]:<14} {c.board:<11} {who:<14} {p}")
                continue
            got = getattr(p, attr)
            print(f"{c.model[:14]:<14} {c.board:<11} {who:<14} {p.total / 1e6:>7.2f} "
                  + " ".join(f"{got.get(k, 0) / 1e6:>9.2f}" for k in order))


def pad_table(cells: list[Any]) -> None:
    """PAD first: the runs with every PAD kept, and the baseline checkout's, beside
    cmsis_nn's (PADs folded) and TFLM's, for the cells that have them."""
    from cmsis_nn_bench import Measure
    rows = [c for c in cells if any(k in c.tvmdev for k in PAD_RUNS)]
    if not rows:
        return
    print("\nPAD first (CMSIS-NN; kept: --no-fold-pads; baseline: --baseline's tvmdev): "
          "instructions per inference, arena in bytes")
    print(f"{'model':<21} {'board':<11} {'baseline':>11} {'kept':>11} {'folded':>11} "
          f"{'TFLM+CN':>11} {'fold/TFLM':>9} | {'arena base':>10} {'arena kept':>10} "
          f"{'arena fold':>10}")
    for c in rows:
        b, k, n, t = (c.tvmdev.get("baseline", Measure()), c.tvmdev.get("kept", Measure()),
                      c.tvmdev["cmsis_nn"], c.tflm)
        print(f"{c.model:<21} {c.board:<11} {fmt(b.instructions, 11)} "
              f"{fmt(k.instructions, 11)} {fmt(n.instructions, 11)} "
              f"{fmt(t.instructions, 11)} {ratio(n.instructions, t.instructions, 9)} | "
              f"{fmt(b.arena, 10)} {fmt(k.arena, 10)} {fmt(n.arena, 10)}")


