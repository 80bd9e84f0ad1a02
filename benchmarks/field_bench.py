"""The field's models (issue 21): does each import, is it bit-exact with TFLM on the host,
on Cortex-M4 and on Cortex-M55, and how many instructions does one inference take on the
Cortex-M55 with CMSIS-NN, beside TFLM+CMSIS-NN counted the same way.

    source /work/trees/env.sh   # TFLM_SOURCE_DIR, TINYENGINE_SOURCE_DIR, CMSIS_NN_SOURCE_DIR,
                                # and the TFLM peer's trees (benchmarks/_tflm_build.py)
    python benchmarks/field_bench.py [--models a,b] [--no-m4] [--no-tflm] [--json F]

Models: tests/field_models.py (the trees that hold them; a model whose tree is absent says
so). For each:

- ``ops``: its TFLite operators (kinds, and how many);
- ``import``: ``ok``, or tvmdev's one-line refusal;
- ``host``, ``M4`` (mps2_an386), ``M55`` (mps3_an547): ``tvmdev run`` on seeded inputs,
  its saved outputs compared byte for byte with TFLM's Python interpreter's on the same
  inputs: ``yes``, ``NO``, ``does not fit`` (tvmdev's or the linker's line on what is too
  large for which memory) or ``fails``, the line why in a numbered note under the table.
  The Cortex-M runs use CMSIS-NN where CMSIS_NN_SOURCE_DIR names its tree;
- ``tvmdev M55`` / ``TFLM+CMSIS-NN M55``: instructions per inference on mps3_an547,
  tvmdev's ``tvmgen_<model>_run`` and TFLM+CMSIS-NN's ``Invoke``
  (benchmarks/_tflm_peer.py, whose firmware's outputs must equal TFLM's interpreter's
  too, else a note says so), both under QEMU ``-icount`` with SysTick, on the same
  inputs; ``tvmdev / TFLM``: their ratio.

The command above measures the whole table in one run and prints it with its notes;
``--json`` also keeps the rows (with tvmdev's M4 instruction counts). The first run
builds TFLM's library and the peer's trees; the later ones reuse them.

The inputs are _tflm_peer.model_inputs' (the first int8 input over [-128, 0), int16 over
its range, floats as the model's QUANTIZE reads them), so both run the same data.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _tflm_peer as peer  # noqa: E402
import field_models  # noqa: E402
from _tvmdev_output import first_error  # noqa: E402

from tvmdev.frontends.importer import import_file  # noqa: E402
from tvmdev.frontends.tflite import read  # noqa: E402

BOARDS = {"host": "host", "M4": "mps2_an386", "M55": "mps3_an547"}
_INSTR = re.compile(r"^instructions per inference: ([\d,]+) ", re.M)


def run_tvmdev(path: Path, board: str, inputs: dict[str, np.ndarray], outputs: list[str],
               want: list[bytes], work: Path) -> tuple[str, int | None]:
    """``tvmdev run`` on ``board``: (``yes``/``NO``/why not, instructions or None)."""
    (work / "in").mkdir(parents=True, exist_ok=True)
    for name, x in inputs.items():
        np.save(work / "in" / f"{name}.npy", x)
    cmd = [sys.executable, "-m", "tvmdev", "run", str(path), "--inputs", str(work / "in"),
           "--save-outputs", str(work / "out"), "--build-dir", str(work / "build")]
    if board != "host":
        cmd += ["--board", board, "--instructions"]
        tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
        if tree:
            cmd += ["--cmsis-nn", tree]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or "\nPASS" not in text:
        return first_error(text, width=400), None
    got = [np.load(work / "out" / f"{n}.npy").tobytes() for n in outputs]
    found = _INSTR.search(text)
    return ("yes" if got == want else "NO"), (int(found[1].replace(",", "")) if found else None)


def inputs_order(path: Path) -> tuple[list[str], list[str]]:
    """tvmdev's names of the model's inputs and outputs, in the model's order."""
    m = import_file(path).to_model()
    return list(m.inputs), list(m.outputs)


def measure(name: str, boards: list[str], tflm: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"model": name}
    path = field_models.locate(name)
    if isinstance(path, str):
        row["reason"] = path
        return row
    g = read(path, path.read_bytes())
    kinds = Counter(op.kind for op in g.ops)
    row["ops"] = ", ".join(f"{k}×{n}" if n > 1 else k for k, n in sorted(kinds.items()))
    xs = peer.model_inputs(g)
    try:
        ins, outs = inputs_order(path)
    except Exception as exc:  # a refusal: its one line
        row["import"] = getattr(exc, "message", str(exc)).splitlines()[0]
        return row
    row["import"] = "ok"
    want = peer.reference_outputs(path, xs, len(outs))
    with tempfile.TemporaryDirectory() as tmp:
        for label in boards:
            got, count = run_tvmdev(path, BOARDS[label], dict(zip(ins, xs, strict=True)),
                                    outs, want, Path(tmp) / label)
            row[label] = got
            if label != "host":
                row[f"tvmdev_{label.lower()}"] = count
    if tflm:
        try:
            r = peer.measure(path, "mps3_an547")
            row["tflm_m55"] = r["instructions"]
            row["tflm_equal"] = r["outputs_equal"]
        except (peer.PeerUnavailable, RuntimeError) as exc:
            row["tflm_m55"] = None
            lines = str(exc).splitlines()
            why = next((ln for ln in lines if "overflowed" in ln), lines[0])
            row["tflm_reason"] = why.split("ld: ")[-1][:400]
    return row


# What tvmdev or the linker says when a model does not fit a board's memories.
_NO_FIT = ("does not fit", "fits no region", "overflowed")


def _cell(got: str, where: str, notes: list[str]) -> str:
    """A run's table cell: ``yes``/``NO``, or a short word with the reason in ``notes``."""
    if got in ("yes", "NO", ""):
        return got
    short = "does not fit" if any(k in got for k in _NO_FIT) else "fails"
    notes.append(f"{where}: {short}: {got}")
    return f"{short} [{len(notes)}]"


def table(rows: list[dict[str, Any]], boards: list[str]) -> str:
    """The rows as a Markdown table, and numbered notes: why a run failed or what does
    not fit where, and where TFLM's own count is missing or its firmware disagrees."""
    head = ["model", "ops", "import", *boards, "tvmdev M55", "TFLM+CMSIS-NN M55",
            "tvmdev / TFLM"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    for r in rows:
        name = r["model"]
        if "reason" in r:
            notes.append(f"{name}: {r['reason']}")
            lines.append(f"| {name} | | not run [{len(notes)}] |" + " |" * (len(head) - 3))
            continue
        a, b = r.get("tvmdev_m55"), r.get("tflm_m55")
        ratio = f"{a / b:.3f}" if a and b else ""
        runs = [_cell(r.get(x, ""), f"{name} on {x} ({BOARDS[x]})", notes) for x in boards]
        tflm = f"{b:,}" if b else ""
        if r.get("tflm_reason"):
            notes.append(f"{name}: TFLM peer on mps3_an547: {r['tflm_reason']}")
            tflm = f"[{len(notes)}]"
        if r.get("tflm_equal") is False:
            notes.append(f"{name}: the TFLM firmware's outputs differ from its Python "
                         "interpreter's")
            tflm += f" [{len(notes)}]"
        imported = r.get("import", "")
        if imported not in ("ok", ""):
            notes.append(f"{name}: import refused: {imported}")
            imported = f"refused [{len(notes)}]"
        cells = [name, r.get("ops", ""), imported, *runs, f"{a:,}" if a else "", tflm, ratio]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    numbered = [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    return "\n".join([*lines, "", *numbered])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(field_models.MODELS),
                    help="comma-separated names (tests/field_models.py)")
    ap.add_argument("--no-m4", action="store_true", help="skip the Cortex-M4 runs")
    ap.add_argument("--no-tflm", action="store_true", help="skip TFLM+CMSIS-NN's count")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    boards = [b for b in BOARDS if not (args.no_m4 and b == "M4")]
    rows = []
    for name in args.models.split(","):
        try:
            rows.append(measure(name, boards, not args.no_tflm))
        except (RuntimeError, peer.PeerUnavailable) as exc:  # TFLM's own interpreter failed
            rows.append({"model": name, "reason": f"{type(exc).__name__}: {exc}"})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(table(rows, boards))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
