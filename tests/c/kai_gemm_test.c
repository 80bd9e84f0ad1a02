/*
 * Drives tvmdev's KleidiAI integration case by case: reads cases from argv[1], runs
 * tvmdev_kai_gemm_f32 on a device with the case's features, threads and arena, and
 * writes the status, the family used, the counters and Y to argv[2]. The Python test
 * compares Y with numpy.
 *
 * Case: M N K trans_b b_constant alpha beta c_kind threads features force arena calls
 * block, then A (M*K), B (K*N or N*K floats; with block > 0, the 4-bit data as N*K/2
 * bytes and the N*K/block bfloat16 scales), C (0, N, M or M*N values by c_kind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"

static uint8_t arena[4U << 20] __attribute__((aligned(64)));
static float A[1 << 18], B[1 << 20], C[1 << 18], Y[1 << 18], Y0[1 << 18];
static uint8_t Q4[1 << 20];
static uint16_t SCALES[1 << 16];

static int read_ints(FILE *f, long n, int bytes)
{
    long i;
    unsigned v;

    for (i = 0; i < n; i++) {
        if (fscanf(f, "%u", &v) != 1) {
            return -1;
        }
        if (bytes == 1) {
            Q4[i] = (uint8_t)v;
        } else {
            SCALES[i] = (uint16_t)v;
        }
    }
    return 0;
}

static int read_floats(FILE *f, float *dst, long n)
{
    long i;

    for (i = 0; i < n; i++) {
        if (fscanf(f, "%f", &dst[i]) != 1) {
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    FILE *in, *out;
    int ncases, c;

    if (argc != 3 || (in = fopen(argv[1], "r")) == NULL || (out = fopen(argv[2], "w")) == NULL) {
        fprintf(stderr, "usage: kai_gemm_test CASES RESULTS\n");
        return 2;
    }
    if (fscanf(in, "%d", &ncases) != 1) {
        return 2;
    }
    for (c = 0; c < ncases; c++) {
        int M, N, K, trans_b, b_constant, c_kind, threads, features, force, calls, block, i;
        struct tvmk_q4c32 q4;
        long arena_size;
        float alpha, beta;
        struct tvmk_gemm_params p;
        struct tvmdev_kai_config cfg;
        tvm_device_kleidiai_t dev;
        int32_t status = 0, init;
        long nc;

        if (fscanf(in, "%d %d %d %d %d %f %f %d %d %d %d %ld %d %d", &M, &N, &K, &trans_b,
                   &b_constant, &alpha, &beta, &c_kind, &threads, &features, &force,
                   &arena_size, &calls, &block) != 14) {
            return 2;
        }
        nc = c_kind == 0 ? 0 : c_kind == 1 ? N : c_kind == 2 ? M : (long)M * N;
        if (read_floats(in, A, (long)M * K)) {
            return 2;
        }
        if (block > 0) {
            if (read_ints(in, (long)N * K / 2, 1) || read_ints(in, (long)N * K / block, 2)) {
                return 2;
            }
            q4.n = N;
            q4.k = K;
            q4.block = block;
            q4.data = Q4;
            q4.scales = SCALES;
        } else if (read_floats(in, B, (long)K * N)) {
            return 2;
        }
        if (read_floats(in, C, nc)) {
            return 2;
        }
        memset(&cfg, 0, sizeof(cfg));
        cfg.arena = arena;
        cfg.arena_size = (size_t)arena_size;
        cfg.threads = (uint32_t)threads;
        cfg.features = (uint32_t)features;
        cfg.force_features = (uint32_t)force;
        if (!force) {
            cfg.feature_mask = ~(uint32_t)features; /* the CPU's, limited to these */
        }
        init = TVMDeviceKleidiaiInit(&dev, &cfg);
        if (init != 0) {
            fprintf(stderr, "init failed: %d\n", (int)init);
            return 3;
        }
        p.M = M;
        p.N = N;
        p.K = K;
        p.trans_a = 0;
        p.trans_b = trans_b;
        p.alpha = alpha;
        p.beta = beta;
        p.c_stride_m = c_kind == 3 ? N : c_kind == 2 ? 1 : 0;
        p.c_stride_n = c_kind == 3 || c_kind == 1 ? 1 : 0;
        p.b_constant = b_constant;
        p.scratch_bytes = 0; /* KleidiAI packs into the device's arena, not the scratch */
        p.scratch = NULL;
        (void)TVMDeviceKleidiaiActivate(&dev);
        for (i = 0; i < calls; i++) {
            memset(Y, 0, (size_t)M * (size_t)N * sizeof(float));
            status = block > 0
                         ? tvmdev_kai_gemm_q4c32_f32(A, &q4, c_kind ? C : NULL, Y, &p, &dev)
                         : tvmdev_kai_gemm_f32(A, B, c_kind ? C : NULL, Y, &p, &dev);
            if (i == 0) {
                memcpy(Y0, Y, (size_t)M * (size_t)N * sizeof(float));
            } else if (memcmp(Y0, Y, (size_t)M * (size_t)N * sizeof(float)) != 0) {
                status = 99; /* a second call must give the same result */
            }
        }
        (void)TVMDeviceKleidiaiDeactivate(&dev);
        fprintf(out, "%d %s %u %u %u %u\n", (int)status,
                dev.stats.last_ukernel ? dev.stats.last_ukernel : "none",
                (unsigned)dev.stats.calls, (unsigned)dev.stats.declined,
                (unsigned)dev.stats.packs, (unsigned)dev.stats.tiles);
        for (i = 0; i < M * N; i++) {
            fprintf(out, "%.9g\n", (double)Y[i]);
        }
        if (TVMDeviceKleidiaiDestroy(&dev) != 0) {
            return 4;
        }
    }
    fclose(out);
    fclose(in);
    return 0;
}
