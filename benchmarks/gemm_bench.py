"""Portable gemm on the host against numpy, single-threaded, measured side by side.

    python benchmarks/gemm_bench.py [--size 512] [--repeat 20]

Builds runtime/kernels/portable/gemm.c with -O3 -march=native into a small timing
program, times an NxNxN float32 gemm (alpha 1, beta 0; the scratch tvmdev plans for the
host), then times numpy's matmul with
OpenBLAS limited to one thread, in the same run. First bar 0.25; aim 0.5.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PORTABLE = ROOT / "runtime/kernels/portable"
sys.path.insert(0, str(ROOT))

from tvmdev.model.scratch import Tuning, gemm_pack  # noqa: E402

HARNESS = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tvmk_portable.h"
static float A[SIZE * SIZE], B[SIZE * SIZE], Y[SIZE * SIZE];
static float scratch[SCRATCH_BYTES / 4 + 1]; /* what tvmdev's planner gives the call */
static double now(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
    struct tvmk_gemm_params p = {SIZE, SIZE, SIZE, 0, 0, 1.0f, 0.0f, 0, 0, 0, SCRATCH_BYTES,
                                 scratch};
    int i, reps = atoi(argv[1]);
    double best = 1e30, t;
    unsigned s = 1;
    for (i = 0; i < SIZE * SIZE; i++) {
        s = s * 1103515245u + 12345u; A[i] = (float)(s >> 16) / 65536.0f - 0.5f;
        s = s * 1103515245u + 12345u; B[i] = (float)(s >> 16) / 65536.0f - 0.5f;
    }
    (void)argc;
    for (i = 0; i < reps; i++) {
        t = now();
        if (tvmk_gemm_f32(A, B, NULL, Y, &p, NULL) != 0) return 1;
        t = now() - t;
        if (t < best) best = t;
    }
    printf("%.6f %.6f\n", best, (double)Y[SIZE + 1]);
    return 0;
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    n = args.size
    flops = 2.0 * n * n * n
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        subprocess.run(["tvmdev", "new-device", "bench", "--platform", "posix", "-o",
                        str(t / "dev")], check=True, capture_output=True)
        (t / "bench.c").write_text(HARNESS)
        scratch = gemm_pack({"M": n, "N": n, "K": n}, Tuning())
        cmd = ["gcc", "-O3", "-march=native", "-std=c99", f"-DSIZE={n}",
               f"-DSCRATCH_BYTES={scratch}", f"-I{PORTABLE}",
               f"-I{t / 'dev/include'}", str(t / "bench.c"), str(PORTABLE / "gemm.c"),
               "-lm", "-o", str(t / "bench")]
        subprocess.run(cmd, check=True)
        out = subprocess.run([str(t / "bench"), str(args.repeat)], check=True,
                             capture_output=True, text=True).stdout.split()
        c_best = float(out[0])
    env_code = (
        "import numpy as np, time\n"
        f"n={n}\nrng=np.random.default_rng(0)\n"
        "a=rng.random((n,n),dtype=np.float32); b=rng.random((n,n),dtype=np.float32)\n"
        "best=1e30\n"
        f"for _ in range({args.repeat}):\n"
        "    t=time.perf_counter(); a@b; best=min(best,time.perf_counter()-t)\n"
        "print(best)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    np_best = float(subprocess.run([sys.executable, "-c", env_code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    c_gf, np_gf = flops / c_best / 1e9, flops / np_best / 1e9
    print(f"gemm {n}x{n}x{n} float32, one thread, best of {args.repeat}")
    print(f"  portable C (gcc -O3 -march=native): {c_gf:7.1f} GFLOP/s ({c_best * 1e3:.2f} ms)")
    print(f"  numpy matmul (OpenBLAS, 1 thread):  {np_gf:7.1f} GFLOP/s ({np_best * 1e3:.2f} ms)")
    print(f"  ratio: {c_gf / np_gf:.2f}  (first bar 0.25, aim 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
