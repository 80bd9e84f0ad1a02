"""KleidiAI gemm under qemu-aarch64: the integration against the portable kernel, and
the integration's own overhead against the bare micro-kernel on pre-packed data.

    KLEIDIAI_SOURCE_DIR=/path/to/kleidiai python benchmarks/kleidiai_bench.py

Debian's QEMU ships no TCG plugins to count instructions, so this times the three under
qemu-aarch64 in the same run (best of --repeat), as a rough proxy. Shapes: 128x128x128
and 1x4096x4096 (M x N x K), B a packed constant. The bare micro-kernel runs the whole
output in one call on a B packed beforehand and, where the family needs it, an LHS
packed beforehand; the integration packs the LHS on every call, tiles, and writes back.
Without a KleidiAI tree the reference micro-kernels stand in (and say so).

Then fully_connected (batch x in @ [out, in]^T + bias, RELU6): the portable kernel
against tvmdev_kai_fully_connected_f32, the weights a constant packed at the first call,
for 1x640 -> 128 (a typical MCU-sized layer) and batch 8.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tvmdev.load.platform import platform_by_name  # noqa: E402
from tvmdev.run.trees import compile_trees, platform_tree  # noqa: E402

PROGRAM = r"""
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"

static uint8_t arena[160U << 20] __attribute__((aligned(64)));
static uint8_t lhs_packed[8U << 20] __attribute__((aligned(64)));
static float scratch[32768 / 4]; /* the portable kernel's, as planned on a host */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), reps = atoi(argv[4]);
    const unsigned mask = (unsigned)atoi(argv[5]);
    float *A = malloc((size_t)M * K * 4), *B = malloc((size_t)K * N * 4);
    float *Y = malloc((size_t)M * N * 4);
    struct tvmk_gemm_params p = {M, N, K, 0, 0, 1.0f, 0.0f, 0, 0, 1, 0, scratch};
    struct tvmdev_kai_config cfg;
    tvm_device_kleidiai_t dev;
    const struct tvmdev_kai_f32_ukernel *uk;
    double t, best_port = 1e30, best_int = 1e30, best_bare = 1e30;
    const uint8_t *rhs;
    int i;

    for (i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (i = 0; i < K * N; i++) B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    p.scratch_bytes = tvmk_gemm_scratch_bytes(M, N, K);
    if (p.scratch_bytes > (int32_t)sizeof(scratch)) p.scratch_bytes = (int32_t)sizeof(scratch);
    memset(&cfg, 0, sizeof(cfg));
    cfg.arena = arena;
    cfg.arena_size = sizeof(arena);
    cfg.feature_mask = mask;
    if (TVMDeviceKleidiaiInit(&dev, &cfg) != 0 || TVMDeviceKleidiaiActivate(&dev) != 0)
        return 2;
    if (tvmdev_kai_gemm_f32(A, B, NULL, Y, &p, &dev) != 0) /* packs B once */
        return 3;
    uk = tvmdev_kai_select_f32(dev.features);
    rhs = dev.arena + dev.slots[0].offset;
    for (i = 0; i < reps; i++) {
        t = now();
        tvmk_gemm_f32(A, B, NULL, Y, &p, NULL);
        t = now() - t;
        if (t < best_port) best_port = t;
        t = now();
        tvmdev_kai_gemm_f32(A, B, NULL, Y, &p, &dev);
        t = now() - t;
        if (t < best_int) best_int = t;
    }
    if (uk->get_mr != NULL)
        uk->lhs_pack((size_t)M, (size_t)K, uk->get_mr(), uk->get_kr(), uk->get_sr(), 0, A,
                     (size_t)K * 4, lhs_packed);
    for (i = 0; i < reps; i++) {
        t = now();
        if (uk->get_mr != NULL)
            uk->run_packed_lhs((size_t)M, (size_t)N, (size_t)K, lhs_packed, rhs, Y,
                               (size_t)N * 4, 4, -FLT_MAX, FLT_MAX);
        else
            uk->run_plain_lhs((size_t)M, (size_t)N, (size_t)K, A, (size_t)K * 4, rhs, Y,
                              (size_t)N * 4, 4, -FLT_MAX, FLT_MAX);
        t = now() - t;
        if (t < best_bare) best_bare = t;
    }
    printf("%s %.6f %.6f %.6f\n", uk->name, best_port, best_int, best_bare);
    return 0;
}
"""

FC_PROGRAM = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"

static uint8_t arena[16U << 20] __attribute__((aligned(64)));

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int B = atoi(argv[1]), I = atoi(argv[2]), O = atoi(argv[3]), reps = atoi(argv[4]);
    const unsigned mask = (unsigned)atoi(argv[5]);
    float *X = malloc((size_t)B * I * 4), *W = malloc((size_t)O * I * 4);
    float *bias = malloc((size_t)O * 4), *Y = malloc((size_t)B * O * 4);
    struct tvmk_fully_connected_params p = {B, I, O, TVMK_ACT_RELU6, 1};
    struct tvmdev_kai_config cfg;
    tvm_device_kleidiai_t dev;
    double t, best_port = 1e30, best_kai = 1e30;
    int i;

    for (i = 0; i < B * I; i++) X[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (i = 0; i < O * I; i++) W[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (i = 0; i < O; i++) bias[i] = (float)(i % 3) - 1.0f;
    memset(&cfg, 0, sizeof(cfg));
    cfg.arena = arena;
    cfg.arena_size = sizeof(arena);
    cfg.feature_mask = mask;
    if (TVMDeviceKleidiaiInit(&dev, &cfg) != 0 || TVMDeviceKleidiaiActivate(&dev) != 0)
        return 2;
    if (tvmdev_kai_fully_connected_f32(X, W, bias, Y, &p, &dev) != 0) /* packs W once */
        return 3;
    for (i = 0; i < reps; i++) {
        t = now();
        tvmk_fully_connected_f32(X, W, bias, Y, &p, NULL);
        t = now() - t;
        if (t < best_port) best_port = t;
        t = now();
        tvmdev_kai_fully_connected_f32(X, W, bias, Y, &p, &dev);
        t = now() - t;
        if (t < best_kai) best_kai = t;
    }
    printf("%s %.6f %.6f\n", dev.stats.last_ukernel, best_port, best_kai);
    return 0;
}
"""


def fully_connected(tmp: Path, cc: str, flags: list[str], objects: list[str], repeat: int
                    ) -> None:
    """Time the portable fully_connected kernel against KleidiAI's."""
    (tmp / "fc.c").write_text(FC_PROGRAM)
    sources = [str(tmp / "fc.c"), str(tmp / "dev/src/device/kleidiai/kleidiai.c"),
               *map(str, sorted((tmp / "dev/src/kleidiai").glob("*.c"))),
               str(ROOT / "runtime/kernels/portable/fully_connected.c")]
    subprocess.run([cc, *flags, *sources, *objects, "-static", "-pthread", "-lm", "-o",
                    str(tmp / "fc")], check=True)
    print(f"\nfully_connected (RELU6, bias), qemu-aarch64, best of {repeat}, seconds")
    print(f"{'batch x in -> out':<18} {'cpu':<10} {'micro-kernel':<62} {'portable':>9} "
          f"{'kleidiai':>9} {'speedup':>8}")
    for b, i, o in ((1, 640, 128), (8, 640, 128)):
        for cpu, mask, label in (("max", 0, "max"), ("max", 8 | 16, "max-no-sme"),
                                 ("cortex-a53", 0, "a53")):
            out = subprocess.run(["qemu-aarch64", "-cpu", cpu, str(tmp / "fc"), str(b), str(i),
                                  str(o), str(repeat), str(mask)], check=True,
                                 capture_output=True, text=True).stdout.split()
            name, port, kai = out[0], float(out[1]), float(out[2])
            print(f"{f'{b}x{i} -> {o}':<18} {label:<10} {name:<62} {port:9.5f} {kai:9.5f} "
                  f"{port / kai:7.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    plat = platform_by_name("kleidiai")
    build = platform_tree(plat)
    cc = "aarch64-linux-gnu-gcc"
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        # This checkout's tvmdev, whatever the installed one is.
        subprocess.run([sys.executable, "-m", "tvmdev", "new-device", "kleidiai", "--platform",
                        "kleidiai", "-o", str(tmp / "dev")], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        (tmp / "bench.c").write_text(PROGRAM)
        flags = ["-O2", "-std=c99", f"-I{tmp / 'dev/include'}", f"-I{tmp / 'dev/src/kleidiai'}",
                 f"-I{ROOT / 'runtime/kernels/portable'}"]
        objects: list[str] = []
        if build is not None:
            flags += [f"-I{build.root}", "-DTVMDEV_KAI_REAL"]
            objects = [str(o) for o in compile_trees(cc, [], [build])]
        else:
            print("KLEIDIAI_SOURCE_DIR is not set: timing tvmdev's REFERENCE micro-kernels")
        sources = [str(tmp / "bench.c"), str(tmp / "dev/src/device/kleidiai/kleidiai.c"),
                   *map(str, sorted((tmp / "dev/src/kleidiai").glob("*.c"))),
                   str(ROOT / "runtime/kernels/portable/gemm.c")]
        subprocess.run([cc, *flags, *sources, *objects, "-static", "-pthread", "-lm", "-o",
                        str(tmp / "bench")], check=True)
        print(f"qemu-aarch64, best of {args.repeat}, seconds (a rough proxy for instructions)")
        print(f"{'shape MxNxK':<14} {'cpu':<6} {'micro-kernel':<62} {'portable':>9} "
              f"{'tvmdev':>9} {'bare':>9} {'speedup':>8} {'overhead':>9}")
        for m, n, k in ((128, 128, 128), (1, 4096, 4096)):
            for cpu, mask, label in (("max", 0, "max"), ("max", 8 | 16, "max-no-sme")):
                out = subprocess.run(["qemu-aarch64", "-cpu", cpu, str(tmp / "bench"), str(m),
                                      str(n), str(k), str(args.repeat), str(mask)],
                                     check=True, capture_output=True, text=True,
                                     env=dict(os.environ)).stdout.split()
                name, port, integ, bare = out[0], *map(float, out[1:])
                print(f"{f'{m}x{n}x{k}':<14} {label:<6} {name:<62} {port:9.4f} {integ:9.4f} "
                      f"{bare:9.4f} {port / integ:7.2f}x {integ / bare - 1:8.1%}")
        fully_connected(tmp, cc, flags, objects, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
