"""Generator speed: load, plan and render the executor of an N-operator model.

    python benchmarks/generator_bench.py [--sizes 1000 5000 20000]

Target: 5,000 operators in under 2 s, growing no worse than n log n. The time is the best
of --repeat runs; "load" is reading and checking the YAML (shape inference included),
"gen+plan" is scheduling, memory planning, kernel resolution and rendering, "total" both
(what `tvmdev aot` does before writing). Graphs: benchmarks/_graphs.py.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _graphs import write_graph  # noqa: E402

from tvmdev.load.board import board_by_name  # noqa: E402
from tvmdev.load.model import load_model  # noqa: E402
from tvmdev.plan.pipeline import Options, compile_model  # noqa: E402
from tvmdev.render.executor import executor_files  # noqa: E402


def timed(path: Path, repeat: int) -> tuple[float, float, int]:
    best_load = best_total = math.inf
    size = 0
    host = board_by_name("host")
    gc.disable()  # as the tvmdev command line runs
    for _ in range(repeat):
        t0 = time.perf_counter()
        m = load_model(path)
        t1 = time.perf_counter()
        files = executor_files(compile_model(m, host, Options("lazy")), "tvmdev aot")
        t2 = time.perf_counter()
        best_load = min(best_load, t1 - t0)
        best_total = min(best_total, t2 - t0)
        size = sum(len(f.content) for f in files)
        del m, files
        gc.collect()
    gc.enable()
    return best_load, best_total, size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            load, total, size = timed(write_graph(Path(tmp), n, 0), args.repeat)
            rows.append((n, load, total, size))
    print(f"{'ops':>7} {'load s':>8} {'gen+plan s':>10} {'total s':>8} {'us/op':>7} "
          f"{'/ n log n':>10} {'C bytes':>10}")
    base = rows[0]
    for n, load, total, size in rows:
        scaled = (total / (n * math.log(n))) / (base[2] / (base[0] * math.log(base[0])))
        print(f"{n:>7} {load:>8.3f} {total - load:>10.3f} {total:>8.3f} {total / n * 1e6:>7.1f} "
              f"{scaled:>10.2f} {size:>10}")
    print("'/ n log n': time per n*log(n), relative to the smallest size (<= ~1 means the "
          "growth is n log n or better)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
