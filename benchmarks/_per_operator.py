"""Where tvmdev's instructions go on a board Unicorn cannot run (the Cortex-M55: no
Helium in Unicorn), for cmsis_nn_bench.py's --profile: ``tvmdev run --instructions
--per-operator`` (the executor's TRACE hook recording SysTick under QEMU -icount, the
hook's own cost taken out: tvmdev/run/icount_ops.py) in a build of its own, its rows
summed by operator kind and by kernel library into a _profile.Profile (no instruction
classes: those need the disassembly of every executed block).

API::

    per_operator(model_path, board, cmsis_nn_tree, build_dir) -> Profile | str
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from _profile import Profile, operator_kind

_ROW = re.compile(r"^\s+(\d+)\s+\S+\s+(\S+)\s+(\S+)\s+([\d,]+)\s+[\d.]+%$", re.M)
_AFTER = re.compile(r"^\s+\(after the last operator\)\s+([\d,]+)\s+[\d.]+%$", re.M)
_TOTAL = re.compile(r"^instructions per inference: ([\d,]+)", re.M)


def library(kernel: str) -> str:
    """The kernel library a tvmdev kernel's name says."""
    if kernel.startswith("tvmk_cmsis_nn_"):
        return "cmsis_nn"
    if kernel.startswith("tvmk_cm_"):
        return "tvmdev_cm"
    if kernel == "(view)":
        return "executor"
    return "portable" if kernel.startswith("tvmk_") else "other"


def parse(text: str) -> Profile:
    """The per-operator table of ``tvmdev run``'s output, summed."""
    p = Profile()
    for m in _ROW.finditer(text):
        op, kernel, n = m[2], m[3], int(m[4].replace(",", ""))
        p.by_operator[kernel] += n
        p.calls[kernel] += 1
        p.by_kind["reshape" if kernel == "(view)" else operator_kind(op)] += n
        p.by_library[library(kernel)] += n
        p.total += n
    after = _AFTER.search(text)
    if after is not None:
        p.by_library["executor"] += int(after[1].replace(",", ""))
        p.total += int(after[1].replace(",", ""))
    total = _TOTAL.search(text)
    p.measured = int(total[1].replace(",", "")) if total else None
    return p


def per_operator(path: Path, board: str, tree: str | None, build: Path) -> Profile | str:
    """tvmdev's run of ``path`` on ``board`` with its libraries, counted per operator, or
    why not."""
    run = subprocess.run([sys.executable, "-m", "tvmdev", "run", str(path), "--board", board,
                          "--build-dir", str(build), "--instructions", "--per-operator",
                          *(["--cmsis-nn", tree] if tree else [])],
                         capture_output=True, text=True)
    text = run.stdout + run.stderr
    if run.returncode != 0 or "\nPASS" not in text:
        return f"no per-operator count: {text.strip().splitlines()[-1:]}"
    got = parse(text)
    return got if got.total else "no per-operator count: the run printed no table"
