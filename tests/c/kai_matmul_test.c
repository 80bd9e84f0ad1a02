/*
 * tvmdev_kai_matmul_f32 with the portable kernel's params: a single product (no batch
 * dims) runs on KleidiAI and matches the portable kernel; a batched or broadcast one is
 * declined, so the executor falls back to the portable kernel. Prints one line per case:
 * the status, the number of declined calls and the largest difference from the portable
 * result (when served). Exit 0 when it ran.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"
#include "tvmk_portable.h"

static uint8_t arena[1U << 20] __attribute__((aligned(64)));
static float A[3 * 3 * 4], B[2 * 4 * 2], Y[6 * 3 * 2], Y_portable[6 * 3 * 2];

static void run(const char *label, const struct tvmk_matmul_params *p)
{
    struct tvmdev_kai_config cfg;
    tvm_device_kleidiai_t dev;
    int32_t status, portable;
    float diff = 0.0f;
    int i;

    memset(&cfg, 0, sizeof(cfg));
    cfg.arena = arena;
    cfg.arena_size = sizeof(arena);
    cfg.threads = 1;
    cfg.features = 1; /* NEON */
    cfg.force_features = 1;
    if (TVMDeviceKleidiaiInit(&dev, &cfg) != 0) {
        printf("%s init-failed\n", label);
        return;
    }
    (void)TVMDeviceKleidiaiActivate(&dev);
    memset(Y, 0, sizeof(Y));
    status = tvmdev_kai_matmul_f32(A, B, Y, p, &dev);
    portable = tvmk_matmul_f32(A, B, Y_portable, p, NULL);
    for (i = 0; status == 0 && i < p->batch * p->M * p->N; i++) {
        diff = fmaxf(diff, fabsf(Y[i] - Y_portable[i]));
    }
    printf("%s %d %u %d %g\n", label, (int)status, (unsigned)dev.stats.declined,
           (int)portable, (double)diff);
    (void)TVMDeviceKleidiaiDeactivate(&dev);
    (void)TVMDeviceKleidiaiDestroy(&dev);
}

int main(void)
{
    /* [3, 4] x [4, 2]: one product. */
    struct tvmk_matmul_params single = {1, 3, 2, 4, 0, {1, 1, 1, 1}, {0}, {0}, 0, 0, NULL};
    /* [3, 1, 3, 4] x [1, 2, 4, 2]: numpy batch broadcasting to [3, 2]. */
    struct tvmk_matmul_params broadcast = {6, 3, 2, 4, 2, {3, 2, 1, 1}, {12, 0}, {0, 8}, 0, 0, NULL};
    int i;

    for (i = 0; i < (int)(sizeof(A) / sizeof(A[0])); i++) {
        A[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    }
    for (i = 0; i < (int)(sizeof(B) / sizeof(B[0])); i++) {
        B[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
    }
    run("single", &single);
    run("broadcast", &broadcast);
    return 0;
}
