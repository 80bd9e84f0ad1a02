"""Flash and RAM of the executor and the device layer on Cortex-M3, per example model.

    python benchmarks/footprint.py [--board mps2_an385]

Builds each example's firmware for the board and reads the footprint by component
with `tvmdev inspect` (pyelftools): flash = text + rodata + data, RAM = data + bss.
The executor's RAM is its static workspace; constants and kernels are listed apart.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--board", default="mps2_an385")
    ap.add_argument("--schedule", default="eager")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "examples").glob("*/*.yaml")):
            build = Path(tmp) / path.stem
            run = subprocess.run(["tvmdev", "run", str(path), "--board", args.board,
                                  "--schedule", args.schedule, "--build-dir", str(build)],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(run.stdout + run.stderr)
                return 1
            out = subprocess.run(["tvmdev", "inspect", str(build / f"{path.stem}.elf"),
                                  "--model", str(build), "--json"], capture_output=True,
                                 text=True, check=True).stdout
            fp = json.loads(out)["footprint"]
            rows.append((path.stem, fp))
    print(f"{args.board}: bytes by component ({args.schedule} schedule)")
    head = (f"{'model':<6} {'executor flash':>15} {'executor RAM':>13} {'device flash':>13} "
            f"{'device RAM':>11} {'exec+dev flash':>15} {'exec+dev RAM':>13} "
            f"{'kernels flash':>14} {'constants':>10}")
    print(head)
    for name, fp in rows:
        def flash(c: str, fp: dict = fp) -> int:  # type: ignore[type-arg]
            return int(fp[c]["text"] + fp[c]["rodata"] + fp[c]["data"])

        def ram(c: str, fp: dict = fp) -> int:  # type: ignore[type-arg]
            return int(fp[c]["data"] + fp[c]["bss"])

        print(f"{name:<6} {flash('executor'):>15} {ram('executor'):>13} "
              f"{flash('device layer'):>13} {ram('device layer'):>11} "
              f"{flash('executor') + flash('device layer'):>15} "
              f"{ram('executor') + ram('device layer'):>13} {flash('kernels'):>14} "
              f"{flash('constants'):>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
