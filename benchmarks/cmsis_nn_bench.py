"""CMSIS-NN against tvmdev's portable int8 kernels, and against TFLM with CMSIS-NN, on
the MLPerf Tiny int8 models, on emulated Cortex-M boards: instructions per inference,
workspace (arena) and code flash, side by side with their ratios.

    CMSIS_NN_SOURCE_DIR=/work/trees/cmsis-nn python benchmarks/cmsis_nn_bench.py \\
        [--models a,b] [--boards mps2_an386,mps3_an547] [--m3] [--check] [--cmsis-nn PATH]
        [--baseline CHECKOUT]

Models: keyword_spotting, image_classification, anomaly_detection, visual_wake_words
from the model cache (``python3 tests/models.py``), and mcunet_vww, MIT TinyEngine's
``assets/vww.tflite`` (tests/field_models.py), when TINYENGINE_SOURCE_DIR names its tree.
Boards: mps2_an386 (Cortex-M4, DSP:
CMSIS-NN's _dsp code) and mps3_an547 (Cortex-M55, MVE); ``--m3`` adds mps2_an385
(Cortex-M3, CMSIS-NN's pure C code).

Each tvmdev figure is one ``tvmdev run MODEL --board B --instructions`` (outputs checked
against the reference: only a PASS is reported), with ``--cmsis-nn off`` (every int8
operator on the portable kernels) or ``--cmsis-nn TREE`` (the board's default: cmsis_nn
first, the portable kernels where it declines; the run's ``kernels:`` line is kept).

- instructions: the instructions of the one ``tvmgen_<model>_run`` call, counted under
  QEMU ``-icount shift=0`` with SysTick (benchmarks/_icount.py; ± one SysTick tick, 40
  instructions on MPS2, 32 on AN547). Like Arm's "architecturally executed", it counts
  IT-block instructions whose condition fails.
- arena: the workspace the plan gives the model (tensors and every kernel's scratch,
  CMSIS-NN's buffers included), without the model's input and output buffers, which
  tvmdev's caller provides; ``cn+I/O`` adds them, to compare with TFLM's
  ``arena_used_bytes`` (which holds them, and TFLM's own persistent data).
- code: executor plus kernels, text + rodata + data, without the weights
  (``tvmdev inspect --json``'s executor and kernels components; with a plan, inspect
  counts the CMSIS-NN library's code among the kernels).
- PAD first (issue 25), for a model with a PAD (and every model with ``--baseline``):
  ``cmsis_nn`` folds each PAD it can into its reader (tvmdev/plan/padfold.py); ``kept``
  is the same run with ``--no-fold-pads`` (every PAD an operator, on arm_pad_s8);
  ``baseline`` is ``tvmdev run`` of another checkout (``--baseline /work/main``: the
  plan and kernels before the change), same board, tree and counter.
- TFLM+CMSIS-NN: TFLM built bare-metal with its CMSIS-NN kernels, on the same board and
  counted with the same counter, from ``benchmarks/_tflm_peer.py``'s
  ``measure(model_path, board)`` (a dict with ``instructions``, ``arena_bytes``,
  ``flash_bytes``, ``flash_parts`` and ``outputs_equal``); its code column is the parts
  like tvmdev's (TFLM's interpreter, kernels and registrations, and CMSIS-NN: no libc,
  no startup or UART), the whole ELF's flash is in the notes. Without that module, or
  when it raises, the columns say why.

- TinyEngine (int, fp): MIT TinyEngine's generated code and kernels on the same board and
  counter, with integer requantization and with its default float one, from
  ``benchmarks/_tinyengine_peer.py``'s ``measure(model_path, board, requant)``; ``*``
  marks a count whose outputs are not TFLM's interpreter's (the notes say by how much),
  and a model its generator refuses has the reason in the notes.

Why the count is trusted: a tick is 1e9 / clock_hz instructions because -icount makes an
instruction exactly 1 ns of virtual time and SysTick runs on that clock; loops of exactly
known length are counted right on all four boards (``python benchmarks/_icount.py``),
and ``--check`` also counts each M3 and M4 firmware's run call with Unicorn, one
instruction at a time by blocks (_cortex_m3_emu.py, ``failed=True``), and reports the
difference (within one tick when the counter works).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_tables as tables  # noqa: E402
import _profile  # noqa: E402
from _flash import elf_flash  # noqa: E402
from _per_operator import per_operator  # noqa: E402
from _tvmdev_output import first_error  # noqa: E402

MODELS = ("keyword_spotting", "image_classification", "anomaly_detection",
          "visual_wake_words", "person_detect", "mcunet_vww")
# Models of the field (tests/field_models.py), by this benchmark's name.
FIELD = {"person_detect": "person_detect", "mcunet_vww": "vww"}
BOARDS = ("mps2_an386", "mps3_an547")
M3 = "mps2_an385"
UNICORN_CPUS = {"mps2_an385": "cortex-m3", "mps2_an386": "cortex-m4",
                "mps2_an500": "cortex-m7"}
KERNELS = ("portable", "cmsis_nn")
# What --profile calls in each firmware: the counted function and the one whose callees
# are the operators (tvmdev's: tvmgen_<model>_run and _run_with_workspace).
PROFILED = {"TFLM": ("_ZN6tflite16MicroInterpreter6InvokeEv",
                     "_ZN6tflite21MicroInterpreterGraph14InvokeSubgraphEi"),
            "TinyEngine": ("invoke", "invoke")}
_INSTR = re.compile(r"^instructions per inference: ([\d,]+) \(QEMU -icount, ±(\d+)\)$", re.M)


@dataclass
class Measure:
    """One model on one board with one choice of kernels, or why not."""

    instructions: int | None = None
    arena: int | None = None
    code: int | None = None
    io: int | None = None  # the model's input and output buffers (outside tvmdev's arena)
    kernels: str = ""  # the run's "kernels:" line
    check: str = ""  # --check: Unicorn's count beside QEMU's
    reason: str | None = None
    consts: int | None = None  # tvmdev: weights and per-layer params; TFLM: its .tflite
    own_code: int | None = None  # tvmdev: ``code`` less the per-layer params
    flash: int | None = None  # _flash.elf_flash: the ELF's loaded bytes less the input
    elf: Path | None = None
    entry: str = ""  # tvmdev: tvmgen_<model>_run


@dataclass
class Cell:
    """One model on one board: tvmdev with each kernel choice, and TFLM."""

    model: str
    board: str
    tvmdev: dict[str, Measure] = field(default_factory=dict)
    tflm: Measure = field(default_factory=Measure)
    tinyengine: dict[str, Measure] = field(default_factory=dict)  # by requantization
    profiles: dict[str, Any] = field(default_factory=dict)  # --profile: run -> Profile


def code_bytes(elf: Path, build: Path) -> tuple[int, int, int]:
    """Executor plus kernels (the CMSIS-NN library's code among them), text + rodata +
    data, as ``tvmdev inspect`` counts them; and the executor's text and data with the
    kernels (code) beside the constants and the executor's rodata (the per-layer params:
    multipliers, shifts, params structs) for the flash by part."""
    out = subprocess.run([sys.executable, "-m", "tvmdev", "inspect", str(elf), "--model",
                          str(build), "--json"], capture_output=True, text=True, check=True)
    fp = json.loads(out.stdout)["footprint"]
    part = {c: {s: int(fp.get(c, {}).get(s, 0)) for s in ("text", "rodata", "data")}
            for c in ("executor", "kernels", "constants")}
    code = sum(sum(part[c].values()) for c in ("executor", "kernels"))
    return code, part["executor"]["rodata"], sum(part["constants"].values())


def measure_tvmdev(path: Path, board: str, kernels: str, tree: str | None, build: Path,
                   check: bool, baseline: Path | None = None) -> Measure:
    """Build and run ``path`` on ``board`` with the portable kernels or CMSIS-NN (``kept``:
    every PAD kept; ``baseline``: the ``baseline`` checkout's tvmdev)."""
    if kernels != "portable" and tree is None:
        return Measure(reason="no CMSIS-NN tree (--cmsis-nn PATH or CMSIS_NN_SOURCE_DIR)")
    choice = ["--cmsis-nn", "off"] if kernels == "portable" else ["--cmsis-nn", str(tree)]
    if kernels == "kept":
        choice.append("--no-fold-pads")
    env, cwd = dict(os.environ), None
    if kernels == "baseline" and baseline is not None:  # python -m reads the cwd first
        env["PYTHONPATH"], cwd = str(baseline), baseline
    run = subprocess.run([sys.executable, "-m", "tvmdev", "run", str(path), "--board", board,
                          "--build-dir", str(build), "--instructions", *choice],
                         capture_output=True, text=True, env=env, cwd=cwd)
    text = run.stdout + run.stderr
    if run.returncode != 0 or "\nPASS" not in text:
        return Measure(reason=f"tvmdev run: {first_error(text)}")
    found = _INSTR.search(text)
    if found is None:
        return Measure(reason="tvmdev run printed no instruction count")
    line = next((ln for ln in text.splitlines() if ln.startswith("kernels:")), "")
    # a board library chosen: CMSIS-NN, or tvmdev_cm ahead of it (anomaly_detection's
    # fully connected layers are all tvmdev_cm's)
    if kernels != "portable" and "cmsis_nn" not in line and "tvmdev_cm" not in line:
        return Measure(reason=f"no board library chosen: {line or first_error(text)}")
    plan = json.loads(next((build / "model").glob("*_plan.json")).read_text())
    elf = next(build.glob("*.elf"))
    io = sum(int(t["bytes"]) for t in plan["tensors"].values()
             if t.get("role") in ("input", "output"))
    code, params, consts = code_bytes(elf, build)
    got = Measure(int(found[1].replace(",", "")), int(plan["arena"]["size"]), code, io,
                  line.removeprefix("kernels: "), consts=consts + params,
                  own_code=code - params, elf=elf, entry=f"tvmgen_{plan['model']}_run",
                  flash=elf_flash(elf, lambda name: name.startswith("in_")))
    if check and board in UNICORN_CPUS:
        got.check = unicorn_check(elf, f"tvmgen_{plan['model']}_run", board,
                                  got.instructions or 0, int(found[2]))
    return got


def unicorn_check(elf: Path, function: str, board: str, counted: int, res: int) -> str:
    """Unicorn's count of the same call beside QEMU's: "=unicorn" within a tick."""
    try:
        import _cortex_m3_emu as emu
    except ImportError as exc:  # pragma: no cover - depends on the environment
        return f"no Unicorn ({exc})"
    try:
        done = emu.run_firmware(elf, function, failed=True, cpu=UNICORN_CPUS[board])
    except Exception as exc:  # Unicorn's M7 has no FPv5 double precision, for one
        return f"Unicorn stopped: {exc}"
    if done.fault is not None or done.exit_status != 0:
        return f"Unicorn: {done.fault or f'exit status {done.exit_status}'}"
    diff = counted - done.instructions
    return f"{'=unicorn' if abs(diff) <= res else 'DIFFERS'} ({diff:+d} of {done.instructions:,})"


def measure_tflm(path: Path, board: str) -> Measure:
    """TFLM with CMSIS-NN on ``board``, from benchmarks/_tflm_peer.py, or why not."""
    try:
        import _tflm_peer  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return Measure(reason="n/a (no benchmarks/_tflm_peer.py yet: the TFLM+CMSIS-NN "
                              "build, same board and counter)")
    measure = getattr(_tflm_peer, "measure", None)
    if measure is None:
        return Measure(reason="n/a (_tflm_peer.py has no measure(model_path, board))")
    try:
        got: Any = measure(path, board)
    except Exception as exc:  # the peer's failure is a reason in the table, not a crash
        return Measure(reason=f"n/a (TFLM: {type(exc).__name__}: {exc})")

    def get(*keys: str) -> Any:
        for k in keys:
            v = got.get(k) if isinstance(got, dict) else getattr(got, k, None)
            if v is not None:
                return v
        return None

    notes = [f"n/a ({get('reason')})"] if get("reason") is not None else []
    if get("instructions") is None:
        notes.append(f"not counted ({get('count')})")
    if get("outputs_equal") is False:
        notes.append("outputs NOT byte-equal to TFLM's Python interpreter")
    parts, flash = get("flash_parts"), get("flash_bytes", "flash")
    code = flash
    if isinstance(parts, dict) and "tflm" in parts:
        code = int(parts["tflm"]) + int(parts.get("cmsis_nn", 0))
        notes.append(f"whole ELF flash without the model {flash:,} bytes ({parts})")
    elf = Path(str(get("elf"))) if get("elf") is not None else None
    return Measure(get("instructions"), get("arena_bytes", "arena_used_bytes", "arena"),
                   code, reason="; ".join(notes) or None, consts=path.stat().st_size,
                   own_code=code, elf=elf,
                   flash=elf_flash(elf, lambda n: n == "tflm_peer_input") if elf else None)


def measure_tinyengine(path: Path, board: str, requant: str) -> Measure:
    """TinyEngine on ``board`` from benchmarks/_tinyengine_peer.py, or why not; a count
    whose outputs are not TFLM's has the difference as its reason."""
    try:
        import _tinyengine_peer as te_peer
        got = te_peer.measure(path, board, requant)
    except Exception as exc:  # a refusal or a missing tree is a reason in the notes
        return Measure(reason=f"n/a ({type(exc).__name__}: {exc})")
    elf = Path(got["elf"])
    return Measure(got["instructions"], got["peak_mem"], kernels=requant, elf=elf,
                   flash=elf_flash(elf, lambda n: n == "te_peer_input"),
                   reason=None if got["exact"] else f"{te_peer.correctness(got)} vs TFLM")


def locate(name: str) -> Path | str:
    """A model's file, or why it is out of reach: the model cache's, or a field model's
    from its tree."""
    from models import model_path
    if name in FIELD:
        import field_models
        return field_models.locate(FIELD[name])
    path = model_path(f"{name}.tflite")
    return path if path is not None else "not in the model cache (python3 tests/models.py)"


def has_pad(path: Path) -> bool:
    from tvmdev.frontends.importer import import_file
    return any(op.op == "pad" for op in import_file(path).to_model().operators)


def profile_cell(cell: Cell, board: str) -> None:
    """--profile: Unicorn's breakdown of the tvmdev, TFLM and TinyEngine firmware of
    ``cell`` (the ELFs its runs left), on a board Unicorn emulates."""
    runs = [("tvmdev", cell.tvmdev.get("cmsis_nn")), ("TFLM", cell.tflm),
            *((f"TinyEngine {k[:3]}", v) for k, v in cell.tinyengine.items())]
    for who, m in runs:
        if m is None or m.elf is None or m.instructions is None:
            continue
        if who == "tvmdev":
            entry, dispatcher = m.entry, f"{m.entry}_with_workspace"
        else:
            entry, dispatcher = PROFILED[who.split()[0]]
        try:
            got = _profile.profile(m.elf, entry, dispatcher, UNICORN_CPUS[board],
                                   own="tinyengine" if who.startswith("TinyEngine") else
                                   "other")
        except Exception as exc:  # Unicorn's M7 lacks some FPv5 code, for one
            cell.profiles[who] = f"no profile: {type(exc).__name__}: {exc}"
            continue
        got.measured = m.instructions
        cell.profiles[who] = got.fault and f"no profile: {got.fault}" or got


def keep(m: Measure, folder: Path) -> None:
    """Copy a peer's ELF and its link map out of the peer's cache (keyed by the model's
    file name: another run may rebuild it meanwhile) for --profile and --keep."""
    if m.elf is None or not m.elf.is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for f in (m.elf, *m.elf.parent.glob("*.map")):
        shutil.copy2(f, folder / f.name)
    m.elf = folder / m.elf.name


def measure_cell(name: str, board: str, args: argparse.Namespace, work: Path) -> Cell:
    """Every run of one model on one board."""
    path = locate(name)
    runs = [k for k in KERNELS if not (args.no_portable and k == "portable")]
    if isinstance(path, Path) and has_pad(path) and not args.no_kept:
        runs.append("kept")
    if args.baseline is not None:
        runs.append("baseline")
    cell = Cell(name, board)
    for kernels in runs:
        cell.tvmdev[kernels] = (
            Measure(reason=path) if isinstance(path, str) else
            measure_tvmdev(path, board, kernels, args.cmsis_nn,
                           work / f"{name}-{board}-{kernels}", args.check, args.baseline))
    cell.tflm = measure_tflm(path, board) if isinstance(path, Path) else Measure(reason=path)
    keep(cell.tflm, work / f"{name}-{board}-tflm")
    if isinstance(path, Path) and not args.no_tinyengine:
        cell.tinyengine = {rq: measure_tinyengine(path, board, rq)
                           for rq in ("integer", "float")}
        for rq, m in cell.tinyengine.items():
            keep(m, work / f"{name}-{board}-tinyengine-{rq}")
    if args.profile and board in UNICORN_CPUS:
        profile_cell(cell, board)
    elif args.profile and isinstance(path, Path) and cell.tvmdev["cmsis_nn"].elf:
        got = per_operator(path, board, args.cmsis_nn, work / f"{name}-{board}-per-operator")
        cell.profiles["tvmdev (trace)"] = got
    return cell


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    ap.add_argument("--boards", default=",".join(BOARDS), help="comma-separated boards")
    ap.add_argument("--m3", action="store_true", help=f"also {M3} (Cortex-M3)")
    ap.add_argument("--check", action="store_true",
                    help="count the M3 and M4 runs with Unicorn too and compare")
    ap.add_argument("--cmsis-nn", metavar="PATH",
                    default=os.environ.get("CMSIS_NN_SOURCE_DIR"),
                    help="the CMSIS-NN tree (default: $CMSIS_NN_SOURCE_DIR)")
    ap.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                    help="also run another tvmdev checkout's CMSIS-NN build (e.g. main's)")
    ap.add_argument("--no-tinyengine", action="store_true",
                    help="skip TinyEngine's runs (benchmarks/_tinyengine_peer.py)")
    ap.add_argument("--no-portable", action="store_true",
                    help="skip the portable kernels' runs")
    ap.add_argument("--no-kept", action="store_true",
                    help="skip the runs with every PAD kept (--no-fold-pads)")
    ap.add_argument("--profile", action="store_true",
                    help="break the M3/M4/M7 runs down with Unicorn (_profile.py): per "
                         "operator kind, per library, per instruction class; the M55's "
                         "tvmdev run per operator (tvmdev run --per-operator)")
    ap.add_argument("--keep", type=Path, metavar="DIR",
                    help="keep tvmdev's build folders here (default: a temporary folder)")
    return ap.parse_args()


def main() -> int:
    args = arguments()
    boards = [*args.boards.split(","), *([M3] if args.m3 else [])]
    cells = []
    with tempfile.TemporaryDirectory() as tmp_name:
        work = args.keep or Path(tmp_name)
        for name in args.models.split(","):
            for board in boards:
                print(f"cmsis_nn_bench: {name} on {board}", file=sys.stderr, flush=True)
                cells.append(measure_cell(name, board, args, work))
        tables.table(cells)
        tables.goals_table(cells)
        tables.profile_table(cells)
        tables.notes(cells)
    return 0


if __name__ == "__main__":
    sys.exit(main())
