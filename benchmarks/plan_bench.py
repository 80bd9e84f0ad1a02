"""Memory plan quality: arena size over its lower bound (the most bytes live at once).

    python benchmarks/plan_bench.py [--graphs 100]

Target: 1.05 or less. Reports the examples and random graphs of 50 to 500 operators.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _graphs import write_graph  # noqa: E402

from tvmdev.load.model import load_model  # noqa: E402
from tvmdev.plan.memory import plan_memory  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graphs", type=int, default=100)
    args = ap.parse_args()
    print(f"{'model':<28} {'ops':>5} {'arena':>9} {'lower bound':>12} {'ratio':>7}")
    for path in sorted((ROOT / "examples").glob("*/*.yaml")):
        m = load_model(path)
        p = plan_memory(m)
        print(f"{path.parent.name:<28} {len(m.operators):>5} {p.arena_size:>9} "
              f"{p.lower_bound:>12} {p.ratio:>7.3f}")
    ratios = []
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.graphs):
            n = rng.randint(50, 500)
            m = load_model(write_graph(Path(tmp), n, seed))
            p = plan_memory(m)
            ratios.append(p.ratio)
    print(f"{'random graphs (' + str(args.graphs) + ')':<28} {'50-500':>5}   ratio: "
          f"mean {statistics.mean(ratios):.3f}, median {statistics.median(ratios):.3f}, "
          f"max {max(ratios):.3f}, share <= 1.05: "
          f"{sum(r <= 1.05 for r in ratios) / len(ratios):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
