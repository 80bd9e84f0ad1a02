"""Issue 24's done-when: tvmdev's RAM beside TFLM's and TinyEngine's, and tvmdev's
instructions with and without patch-based inference, measured in one run on one board
(default mps2_an386, Cortex-M4, as the issue measured), with the issue's goals as
pass/fail columns.

    source /work/trees/env.sh
    python benchmarks/memory_bench.py [--models a,b] [--board mps2_an386] [--json FILE]

Models: keyword_spotting, image_classification, anomaly_detection, visual_wake_words
(the model cache: ``python3 tests/models.py``), person_detect (TFLM's tree), and both
MCUNet models of TinyEngine's tree: mcunet_vww (``assets/vww.tflite``) and
mcunetv2_large (``assets/mcunetv2_large.tflite``) (tests/field_models.py).

- tvmdev RAM: every RAM pool of ``tvmdev aot MODEL --board B --cmsis-nn TREE``'s memory
  report but the stack: the workspace, with the model's inputs and outputs in it (the
  bare-metal boards' ``--io workspace``), or beside it when they are the caller's.
- tvmdev instructions: ``tvmdev run MODEL --board B --cmsis-nn TREE --instructions``
  (QEMU -icount, benchmarks/_icount.py); "exact" when every output's max abs err against
  TFLM's interpreter is 0. Patch-based inference does not exist yet: its column is "—".
- TFLM: ``arena_used_bytes`` of TFLM+CMSIS-NN on the same board (benchmarks/_tflm_peer.py:
  I/O and TFLM's persistent data included), and whether its outputs equal its Python
  interpreter's.
- TinyEngine: its static buffer (PEAK_MEM: activations, the int8 input and output, the
  im2col buffers) layer by layer, and patch-based where its generator has a split for the
  model (benchmarks/_tinyengine_peer.py; TinyEngine's default float requantization); a
  refusal is printed instead of a figure, and a figure whose outputs are not TFLM's is
  marked ``*`` with the difference in the notes. Its patch-based buffer does not hold the
  image (the caller does): the goal counts it like for like, the image added.

Goals (issue 24): RAM <= 0.5x TFLM's on visual_wake_words, person_detect and the MCUNet
models, <= 0.85x on keyword_spotting and image_classification; on MCUNet VWW no more than
TinyEngine's patch-based figure with the image (81,552 bytes); never above either peer;
bit-exact with TFLM; patched instructions <= 1.10x unpatched.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _p in (str(HERE.parent), str(HERE), str(HERE.parent / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _tinyengine_peer as te_peer  # noqa: E402
from _tvmdev_output import first_error  # noqa: E402

MODELS = ("keyword_spotting", "image_classification", "anomaly_detection",
          "visual_wake_words", "person_detect", "mcunet_vww", "mcunetv2_large")
HALF = ("visual_wake_words", "person_detect", "mcunet_vww", "mcunetv2_large")
RATIO = {**{m: 0.5 for m in HALF}, "keyword_spotting": 0.85, "image_classification": 0.85}
# TinyEngine's patch-based MCUNet VWW, counted like for like: 62,352 + the 80x80x3 image
MCUNET_VWW_GOAL = 81_552
INSTRUCTION_GOAL = 1.10
_INSTR = re.compile(r"^instructions per inference: ([\d,]+) \(QEMU -icount", re.M)
_EXACT = re.compile(r": max abs err 0, ")
_POOL = re.compile(r"^    (\S+)\s+([\d,]+)\s", re.M)


@dataclass
class Row:
    model: str
    ram: int | None = None  # tvmdev: every RAM pool but the stack
    ram_parts: str = ""
    instructions: int | None = None
    exact: bool | None = None
    tflm_arena: int | None = None
    tflm_equal: bool | None = None
    te_layer: int | None = None
    te_patch: int | None = None
    te_image: int = 0  # the input bytes TinyEngine's patch-based buffer leaves to the caller
    te_layer_wrong: bool = False  # its outputs are not TFLM's
    te_patch_wrong: bool = False
    notes: list[str] = field(default_factory=list)


def tvmdev(cmd: list[str]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "tvmdev", *cmd], capture_output=True,
                          text=True)
    return proc.returncode, proc.stdout + proc.stderr


def tvmdev_ram(row: Row, path: Path, board: str, tree: str, out: Path) -> None:
    """tvmdev aot's memory report: every RAM pool but the stack."""
    code, text = tvmdev(["aot", str(path), "--board", board, "--cmsis-nn", tree, "-o",
                         str(out)])
    head = text[text.find("RAM:"):text.find("flash:")] if "RAM:" in text else ""
    if code != 0 or not head:
        row.notes.append(f"tvmdev aot: {first_error(text)}")
        return
    pools = [(n, int(b.replace(",", ""))) for n, b in _POOL.findall(head) if n != "stack"]
    row.ram = sum(b for _, b in pools)
    row.ram_parts = head.splitlines()[1].strip() if len(pools) == 1 else ", ".join(
        f"{n} {b:,}" for n, b in pools)


def tvmdev_instructions(row: Row, path: Path, board: str, tree: str, build: Path) -> None:
    """tvmdev run --instructions: the count, and whether every output is exact."""
    code, text = tvmdev(["run", str(path), "--board", board, "--cmsis-nn", tree,
                         "--instructions", "--build-dir", str(build)])
    found = _INSTR.search(text)
    if code != 0 or "\nPASS" not in text or found is None:
        row.notes.append(f"tvmdev run: {first_error(text)}")
        return
    row.instructions = int(found[1].replace(",", ""))
    # tvmdev.run.compare's lines: an integer output's ends "bit-exact", a float one's
    # gives its max abs err
    outputs = [ln for ln in text.splitlines() if ln.startswith("output ")]
    row.exact = bool(outputs) and all(ln.endswith(": bit-exact") or _EXACT.search(ln)
                                      for ln in outputs)


def tflm(row: Row, path: Path, board: str) -> None:
    import _tflm_peer
    try:
        got = _tflm_peer.measure(path, board)
    except Exception as exc:  # the peer's failure is a note, not a crash
        row.notes.append(f"TFLM: {type(exc).__name__}: {exc}")
        return
    row.tflm_arena, row.tflm_equal = got["arena_used_bytes"], got["outputs_equal"]


def tinyengine(row: Row, path: Path, board: str) -> None:
    """TinyEngine's static buffer, layer by layer and patch-based where it has a split."""
    for patches in sorted({n for _, n in te_peer.variants(row.model)}):
        try:
            got = te_peer.measure(path, board, "float", patches)
        except Exception as exc:
            row.notes.append(f"TinyEngine{' patch-based' if patches else ''}: {exc}")
            continue
        if patches:
            row.te_patch = got["peak_mem"]
            row.te_image = got["input_bytes"]
        else:
            row.te_layer = got["peak_mem"]
        if not got["exact"]:
            row.notes.append(f"TinyEngine{' patch-based' if patches else ''} (float "
                             f"requantization): {te_peer.correctness(got)} vs TFLM")
            if patches:
                row.te_patch_wrong = True
            else:
                row.te_layer_wrong = True


def goals(r: Row) -> dict[str, str]:
    """Each goal of issue 24 for the row: "pass", "FAIL", or "-" (not measured / not
    the model's goal)."""
    def verdict(ok: bool | None) -> str:
        return "-" if ok is None else "pass" if ok else "FAIL"

    g: dict[str, str] = {}
    limit = RATIO.get(r.model)
    g["vs TFLM"] = verdict(None if limit is None or r.ram is None or not r.tflm_arena
                           else r.ram <= limit * r.tflm_arena)
    peers = [p for p in (r.tflm_arena, r.te_layer,
                         r.te_patch + r.te_image if r.te_patch else None) if p]
    g["<= peers"] = verdict(None if r.ram is None or not peers else r.ram <= min(peers))
    g["<= 81,552"] = verdict(None if r.model != "mcunet_vww" or r.ram is None
                             else r.ram <= MCUNET_VWW_GOAL)
    g["exact"] = verdict(r.exact)
    g["instr"] = "-"  # no patched plan yet
    return g


def fmt(v: int | None, width: int, mark: bool = False) -> str:
    text = "-" if v is None else f"{v:,}" + ("*" if mark else "")
    return f"{text:>{width}}"


def table(rows: list[Row], board: str) -> None:
    print(f"\n{board}: RAM in bytes (tvmdev: every pool but the stack, I/O included; TFLM: "
          "arena_used_bytes; TinyEngine: its static buffer, * = outputs not TFLM's), "
          "instructions per inference (QEMU -icount)")
    print(f"{'model':<21} {'tvmdev':>9} {'TFLM':>9} {'ratio':>6} {'TE layer':>10} "
          f"{'TE patch':>9} | {'instr.':>12} {'patched':>8} | {'vs TFLM':>7} "
          f"{'<= peers':>8} {'<= 81,552':>9} {'exact':>5} {'instr':>5}")
    for r in rows:
        g = goals(r)
        ratio = (f"{r.ram / r.tflm_arena:>6.2f}" if r.ram and r.tflm_arena else f"{'-':>6}")
        patch = fmt(r.te_patch, 9, r.te_patch_wrong)
        print(f"{r.model:<21} {fmt(r.ram, 9)} {fmt(r.tflm_arena, 9)} {ratio} "
              f"{fmt(r.te_layer, 10, r.te_layer_wrong)} {patch} | "
              f"{fmt(r.instructions, 12)} {'—':>8} | {g['vs TFLM']:>7} {g['<= peers']:>8} "
              f"{g['<= 81,552']:>9} {g['exact']:>5} {g['instr']:>5}")
    print("\nratio: tvmdev / TFLM; goals (issue 24): vs TFLM <= 0.5x on visual_wake_words, "
          "person_detect and the MCUNet models, <= 0.85x on keyword_spotting and "
          "image_classification; <= peers: at most TFLM's and TinyEngine's (patch-based "
          "with the image its caller holds); exact: every output bit-exact with TFLM's "
          "interpreter; instr: patched <= 1.10x unpatched (no patched plan yet)")
    for r in rows:
        if r.ram_parts:
            print(f"{r.model}: tvmdev {r.ram_parts}")
        if r.te_patch:
            print(f"{r.model}: TinyEngine patch-based {r.te_patch:,} + the image "
                  f"{r.te_image:,} held by the caller = {r.te_patch + r.te_image:,}")
        if r.tflm_equal is False:
            print(f"{r.model}: TFLM's firmware outputs NOT equal to its interpreter's")
        for n in r.notes:
            print(f"{r.model}: {n}")


def measure(name: str, board: str, tree: str, tmp: Path) -> Row:
    row = Row(name)
    path = te_peer.locate(name)
    if isinstance(path, str):
        row.notes.append(path)
        return row
    tvmdev_ram(row, path, board, tree, tmp / f"{name}-aot")
    tvmdev_instructions(row, path, board, tree, tmp / f"{name}-run")
    tflm(row, path, board)
    tinyengine(row, path, board)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    ap.add_argument("--board", default="mps2_an386")
    ap.add_argument("--cmsis-nn", metavar="PATH", default=os.environ.get("CMSIS_NN_SOURCE_DIR"),
                    help="the CMSIS-NN tree (default: $CMSIS_NN_SOURCE_DIR)")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    if not args.cmsis_nn:
        ap.error("no CMSIS-NN tree: --cmsis-nn PATH or CMSIS_NN_SOURCE_DIR")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            rows.append(measure(name, args.board, args.cmsis_nn, Path(tmp)))
            print(f"measured {name}", file=sys.stderr, flush=True)
    table(rows, args.board)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) | {"goals": goals(r)} for r in rows],
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

