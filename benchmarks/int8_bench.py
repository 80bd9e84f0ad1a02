"""int8 MLPerf Tiny models: activation memory beside TFLM's, flash on Cortex-M55, and
instructions per inference on Cortex-M3 with the portable int8 kernels.

    python benchmarks/int8_bench.py [--models a,b] [--exact-limit 20e6] [--no-m55] [--no-m3]

Models: anomaly_detection, keyword_spotting, image_classification and visual_wake_words,
from the model cache (``python3 tests/models.py``). A model tvmdev cannot import or run
yet gets its one-line reason instead of numbers.

Columns:
- ``ops``: operators after import;
- ``workspace``: tvmdev's arena, every kernel scratch included, planned for the Cortex-M
  boards' tuning (mps2_an385 and mps3_an547 share it); ``bound``: its lower bound, the
  most bytes (tensors and scratch) live at any one operator, which no plan of whole
  tensors goes under; ``TFLM head``: the activation arena
  TFLM's interpreter plans (``print_allocations``' head, tflite-micro on PyPI, read from a
  child process); ``ratio``: workspace / TFLM head, the target is <= 1.0 (aim 0.9);
  ``I/O``: the model's input and output buffers, which tvmdev's caller provides (outside
  the workspace) and TFLM's head holds: ``+I/O ratio`` compares like with like;
- M55: the firmware for mps3_an547 built by ``tvmdev run`` and read with
  ``tvmdev inspect --json``: ``code`` is executor plus kernels (text + rodata + data,
  without weights), ``weights`` the model's constants, ``RAM`` the executor's and kernels'
  data + bss (the workspace is in it);
- M3: ``instr``, the instructions one ``tvmgen_<model>_run`` call executes (callees
  included) in the firmware ``tvmdev run --board mps2_an385`` built (portable int8
  kernels, arm-none-eabi-gcc -O2), counted with Unicorn (_cortex_m3_emu.py says how);
  ``check``: ``=qemu`` when the firmware under Unicorn printed the same status, stack and
  outputs as under QEMU (where ``tvmdev run`` compared them with the reference: PASS),
  ``+exact`` when the count also equals a per-instruction count (code hook on every
  instruction, as executor_overhead.py counts; done up to --exact-limit instructions).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tvmdev_output import first_error  # noqa: E402
from import_bench import tflm_arena  # noqa: E402

from tvmdev.frontends.importer import import_file  # noqa: E402
from tvmdev.load.board import board_by_name  # noqa: E402
from tvmdev.plan.pipeline import Options, compile_model  # noqa: E402

MODELS = ("anomaly_detection", "keyword_spotting", "image_classification",
          "visual_wake_words")
# Issue 14's table: TFLM's activation arena ("head") for the three MLPerf Tiny models.
TFLM_EXPECTED = {"keyword_spotting": 16000, "image_classification": 49152,
                 "anomaly_detection": 3200}
QUOTED = ("quoted, not measured: TFLM with its reference kernels runs keyword_spotting in "
          "43.2 M instructions on Cortex-M4 (issue 15); tvmdev's M3 count above is the "
          "portable-kernel baseline the CMSIS-NN work will improve")


@dataclass
class Row:
    """What was measured for one model, or why not."""

    name: str
    ops: int | None = None
    workspace: int | None = None
    bound: int | None = None
    io: int | None = None
    tflm: int | None = None
    m55: dict[str, int] = field(default_factory=dict)
    instructions: int | None = None
    check: str = ""
    by_function: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reason: str | None = None


def tvmdev_run(path: Path, board: str, build: Path) -> str | None:
    """Build and run ``path`` on ``board`` into ``build``; None on PASS, else why not."""
    run = subprocess.run([sys.executable, "-m", "tvmdev", "run", str(path), "--board", board,
                          "--build-dir", str(build)], capture_output=True, text=True)
    if run.returncode != 0:
        return f"tvmdev run --board {board}: {first_error(run.stdout + run.stderr)}"
    return None


def planned_arena(build: Path) -> int:
    """The workspace the built firmware uses (its plan's arena)."""
    plan = next((build / "model").glob("*_plan.json"))
    return int(json.loads(plan.read_text())["arena"]["size"])


def memory(row: Row, path: Path) -> bool:
    """Import the model and plan it for the Cortex-M boards' tuning; False when tvmdev
    cannot (the reason is in the row)."""
    found = tflm_arena(path)
    if found is None:
        row.notes.append("TFLM's arena unknown (no tflite-micro, or its interpreter failed)")
    else:
        row.tflm = found[0]
        expected = TFLM_EXPECTED.get(row.name)
        if expected is not None and expected != row.tflm:
            row.notes.append(f"TFLM head {row.tflm} here, issue 14 says {expected}")
    tunings = {board_by_name(b).tuning for b in ("mps2_an385", "mps3_an547")}
    if len(tunings) != 1:
        row.notes.append("the M3 and M55 boards' tunings differ: workspace for mps3_an547")
    try:
        model = import_file(path).to_model()
        gen = compile_model(model, replace(board_by_name("mps3_an547"), memory=None),
                            Options("lazy", trees=(("cmsis_nn", "off"),)))
    except Exception as exc:  # a model the importer or planner refuses: say so, go on
        row.reason = f"{type(exc).__name__}: {getattr(exc, 'message', str(exc))}"
        return False
    row.ops, row.workspace = len(gen.model.operators), gen.memory.arena_size
    row.bound = gen.memory.lower_bound
    row.io = sum(model.tensors[t].nbytes for t in (*model.inputs, *model.outputs))
    return True


def flash_m55(row: Row, path: Path, build: Path) -> None:
    """Flash and RAM by component of the mps3_an547 firmware."""
    why = tvmdev_run(path, "mps3_an547", build)
    if why is not None:
        row.notes.append(why)
        return
    elf = next(build.glob("*.elf"))
    out = subprocess.run([sys.executable, "-m", "tvmdev", "inspect", str(elf), "--model",
                          str(build), "--json"], capture_output=True, text=True, check=True)
    fp = json.loads(out.stdout)["footprint"]

    def part(component: str, *sections: str) -> int:
        return sum(int(fp.get(component, {}).get(s, 0)) for s in sections)

    row.m55 = {"code": sum(part(c, "text", "rodata", "data") for c in ("executor", "kernels")),
               "weights": part("constants", "text", "rodata", "data"),
               "ram": sum(part(c, "data", "bss") for c in ("executor", "kernels"))}
    if row.workspace is not None and planned_arena(build) != row.workspace:
        row.notes.append(f"M55 firmware's workspace {planned_arena(build)} != planned")


def qemu_lines(elf: Path) -> list[str] | str:
    """The ``tvmdev:`` lines the firmware prints under QEMU (as ``tvmdev run`` runs it),
    or why not."""
    spec = board_by_name("mps2_an385").run
    assert spec.qemu is not None
    try:
        run = subprocess.run([spec.qemu, *spec.args, "-kernel", str(elf)], capture_output=True,
                             text=True, timeout=spec.timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"QEMU: {exc}"
    return [ln for ln in run.stdout.splitlines() if ln.startswith("tvmdev:")]


def instructions_m3(row: Row, path: Path, build: Path, exact_limit: float) -> None:
    """Count one run call on the mps2_an385 firmware with Unicorn; check its outputs
    against QEMU's and, when small enough, the count against a per-instruction one."""
    why = tvmdev_run(path, "mps2_an385", build)
    if why is not None:
        row.notes.append(why)
        return
    try:
        import _cortex_m3_emu as emu
    except ImportError as exc:  # pragma: no cover - depends on the environment
        row.notes.append(f"M3 count needs unicorn (pip install -e '.[bench]'): {exc}")
        return
    elf = next(build.glob("*.elf"))
    model = json.loads(next((build / "model").glob("*_plan.json")).read_text())["model"]
    function = f"tvmgen_{model}_run"
    done = emu.run_firmware(elf, function)
    if done.fault is not None or done.exit_status != 0:
        row.notes.append(f"Unicorn: {done.fault or f'exit status {done.exit_status}'}")
        return
    row.instructions, row.by_function = done.instructions, done.by_function
    qemu = qemu_lines(elf)
    if isinstance(qemu, str):
        row.notes.append(qemu)
    elif qemu != done.lines:
        row.check = "DIFFERS"
        row.notes.append(f"Unicorn printed {len(done.lines)} lines, QEMU {len(qemu)}: "
                         "not the same (status, stack or outputs)")
    else:
        row.check = "=qemu"
    if done.instructions <= exact_limit:
        exact = emu.run_firmware(elf, function, exact=True).exact
        if exact == done.instructions:
            row.check += "+exact"
        else:
            row.check += " COUNT?"
            row.notes.append(f"per-instruction count {exact} != {done.instructions}")


def fmt(value: int | None, width: int) -> str:
    return f"{value:>{width},}" if value is not None else f"{'-':>{width}}"


def table(rows: list[Row]) -> None:
    print(f"{'model':<22} {'ops':>4} {'workspace':>10} {'bound':>8} {'TFLM head':>10} "
          f"{'ratio':>6} {'I/O':>6} {'+I/O ratio':>10}  "
          f"M55: {'code':>7} {'weights':>9} {'RAM':>7}  M3: {'instr':>12}  check")
    for r in rows:
        if r.reason is not None:
            print(f"{r.name:<22} {'-':>4} {'-':>10} {'-':>8} {fmt(r.tflm, 10)}  {r.reason}")
            continue
        ratio = (f"{r.workspace / r.tflm:>6.2f}" if r.workspace is not None and r.tflm
                 else f"{'-':>6}")
        io_ratio = (f"{(r.workspace + r.io) / r.tflm:>10.2f}"
                    if r.workspace is not None and r.io is not None and r.tflm
                    else f"{'-':>10}")
        print(f"{r.name:<22} {fmt(r.ops, 4)} {fmt(r.workspace, 10)} {fmt(r.bound, 8)} "
              f"{fmt(r.tflm, 10)} "
              f"{ratio} {fmt(r.io, 6)} {io_ratio}       {fmt(r.m55.get('code'), 7)} "
              f"{fmt(r.m55.get('weights'), 9)} "
              f"{fmt(r.m55.get('ram'), 7)}      {fmt(r.instructions, 12)}  {r.check}")
    print("target: workspace / TFLM head <= 1.0 (aim 0.9); TFLM's head also holds the "
          "model's input and output, tvmdev's caller provides them (+I/O ratio)")
    for r in rows:
        for note in r.notes:
            print(f"{r.name}: {note}")
        if r.by_function and r.instructions:
            top = sorted(r.by_function.items(), key=lambda kv: -kv[1])[:6]
            share = ", ".join(f"{name} {n / r.instructions:.1%}" for name, n in top)
            print(f"{r.name}: M3 instructions by function: {share}")
    print(QUOTED)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    ap.add_argument("--exact-limit", type=float, default=20e6,
                    help="check the count one instruction at a time up to this many")
    ap.add_argument("--no-m55", action="store_true", help="skip the Cortex-M55 builds")
    ap.add_argument("--no-m3", action="store_true", help="skip the Cortex-M3 count")
    args = ap.parse_args()
    from models import model_path

    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name in args.models.split(","):
            row = Row(name)
            rows.append(row)
            path = model_path(f"{name}.tflite")
            if path is None:
                row.reason = "not in the model cache (python3 tests/models.py)"
                continue
            if not memory(row, path):
                continue
            if not args.no_m55:
                flash_m55(row, path, tmp / f"m55_{name}")
            if not args.no_m3:
                instructions_m3(row, path, tmp / f"m3_{name}", args.exact_limit)
    table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
