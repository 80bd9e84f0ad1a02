/*
 * On a Mac (.github/workflows/macos.yml): the Metal device "metal" through its life, and
 * tvmk_metal_gemm_f32 against the portable tvmk_gemm_f32 on ragged shapes, decode (M = 1)
 * and shapes past the apple_m5_max crossover (M >= 400, matmul2d on a Metal 4 GPU).
 * Built from tvmdev new-device metal --platform metal and tvmdev's Metal kernel library.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tvm/device/metal/metal.h"
#include "tvmk_metal.h"

static int failures;

#define EXPECT(call, want)                                                             \
    do {                                                                               \
        int32_t got_ = (call);                                                         \
        if (got_ != (want)) {                                                          \
            fprintf(stderr, "%s:%d: %s = %s, want %s\n", __FILE__, __LINE__, #call,    \
                    TVMDeviceStatusName(got_), TVMDeviceStatusName(want));             \
            failures++;                                                                \
        }                                                                              \
    } while (0)

static float next_value(unsigned long *state)
{
    *state = (*state * 1103515245ul + 12345ul) & 0x7ffffffful;
    return (float)(*state >> 8) / (float)(1ul << 23) - 0.5f;
}

static float *random_matrix(size_t count, unsigned long *state)
{
    float *data = (float *)malloc(count * sizeof(float));
    size_t i;

    for (i = 0; data != NULL && i < count; ++i) {
        data[i] = next_value(state);
    }
    return data;
}

/* Y = 0.5 * A @ B + 2 * C (C one row, broadcast) on the GPU and on the CPU. */
static void compare(tvm_device_metal_t *dev, int32_t m, int32_t n, int32_t k)
{
    unsigned long state = (unsigned long)(m * 7919 + n * 104729 + k);
    struct tvmk_gemm_params p;
    float *a = random_matrix((size_t)m * (size_t)k, &state);
    float *b = random_matrix((size_t)k * (size_t)n, &state);
    float *c = random_matrix((size_t)n, &state);
    float *want = (float *)calloc((size_t)m * (size_t)n, sizeof(float));
    float *got = (float *)calloc((size_t)m * (size_t)n, sizeof(float));
    const int32_t scratch_bytes = tvmk_gemm_scratch_bytes(m, n, k);
    void *scratch = malloc((size_t)scratch_bytes + 1U);
    int32_t status;
    float worst = 0.0f;
    size_t i;

    if (a == NULL || b == NULL || c == NULL || want == NULL || got == NULL || scratch == NULL) {
        fprintf(stderr, "out of memory\n");
        failures++;
        return;
    }
    p.M = m;
    p.N = n;
    p.K = k;
    p.trans_a = 0;
    p.trans_b = 0;
    p.alpha = 0.5f;
    p.beta = 2.0f;
    p.c_stride_m = 0;
    p.c_stride_n = 1;
    p.b_constant = 0;
    p.scratch_bytes = scratch_bytes; /* the portable kernel packs all of B in one block */
    p.scratch = scratch;
    EXPECT(tvmk_gemm_f32(a, b, c, want, &p, NULL), TVM_DEVICE_OK);
    EXPECT(TVMDeviceMetalOpen(dev), TVM_DEVICE_OK);
    status = tvmk_metal_gemm_f32(a, b, c, got, &p, dev);
    EXPECT(TVMDeviceMetalClose(dev), TVM_DEVICE_OK);
    if (status == TVM_DEVICE_DECLINED) {
        printf("M=%d N=%d K=%d: declined (the portable kernel serves it)\n", (int)m, (int)n,
               (int)k);
    } else {
        EXPECT(status, TVM_DEVICE_OK);
        /* The tolerance tvmdev run uses: |got - want| <= 1e-5 + 1e-4 |want|. */
        for (i = 0; i < (size_t)m * (size_t)n; ++i) {
            const float used = fabsf(got[i] - want[i]) / (1e-5f + 1e-4f * fabsf(want[i]));

            worst = used > worst ? used : worst;
        }
        printf("M=%d N=%d K=%d: %s queue, %.3g of the tolerance\n", (int)m, (int)n, (int)k,
               dev->metal4 ? "Metal 4" : "Metal 3", (double)worst);
        if (!(worst <= 1.0f)) {
            failures++;
        }
    }
    free(a);
    free(b);
    free(c);
    free(want);
    free(got);
    free(scratch);
}

int main(void)
{
    static const int32_t shapes[][3] = {
        {1, 1, 1}, {1, 2048, 512}, {33, 17, 9}, {129, 65, 300}, {400, 96, 64}, {512, 256, 128},
    };
    tvm_device_metal_t dev;
    size_t i;
    int32_t status = TVMDeviceMetalInit(&dev, NULL);

    if (status == TVM_DEVICE_ERR_NOT_READY) {
        printf("no Metal device: nothing to test\n");
        return 0;
    }
    EXPECT(status, TVM_DEVICE_OK);
    printf("Metal 4: %s\n", dev.metal4 ? "yes" : "no");
    EXPECT(TVMDeviceMetalOpen(&dev), TVM_DEVICE_ERR_NOT_READY); /* before Activate */
    EXPECT(TVMDeviceMetalActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceMetalClose(&dev), TVM_DEVICE_ERR_INVALID); /* without Open */
    EXPECT(TVMDeviceMetalDestroy(&dev), TVM_DEVICE_ERR_BUSY);  /* while active */
    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); ++i) {
        compare(&dev, shapes[i][0], shapes[i][1], shapes[i][2]);
    }
    EXPECT(TVMDeviceMetalDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceMetalDeactivate(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceMetalDestroy(&dev), TVM_DEVICE_OK);
    printf("%d failures\n", failures);
    return failures != 0;
}
