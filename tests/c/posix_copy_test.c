/*
 * Exercises the copy functions of the generated POSIX device "npu" (new-device npu
 * --platform posix --memory 4K:32): NOT_READY before Init and after Destroy, bytes
 * round-tripped at the ends of the device's memory, every out-of-range address or size
 * refused with TVM_DEVICE_ERR_INVALID (and nothing written), and Wait on a job another
 * thread ends (as the scaffold's comments tell a simulator to) or never ends (timeout).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tvm/device/npu/posix.h"
#include "expect.h"

static tvm_device_npu_t dev; /* static: it holds the device's memory */

/* A simulator thread ending a pending job after 20 ms, as user.h describes. */
static void *end_job(void *arg)
{
    struct timespec pause = {0, 20000000L};

    (void)arg;
    nanosleep(&pause, NULL);
    pthread_mutex_lock(&dev.state_lock);
    dev.user.pending--;
    pthread_cond_broadcast(&dev.user.done);
    pthread_mutex_unlock(&dev.state_lock);
    return NULL;
}

static void pattern(uint8_t *buf, uint32_t n, uint32_t seed)
{
    uint32_t i, x = seed;

    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
}

int main(void)
{
    static uint8_t in[TVM_DEVICE_NPU_MEMORY_SIZE], out[TVM_DEVICE_NPU_MEMORY_SIZE];
    const uint32_t size = TVM_DEVICE_NPU_MEMORY_SIZE;
    pthread_t thread;
    uint8_t before[8];

    /* Before Init: not ready (the struct is zeroed, as a static one is). */
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuWait(&dev, 0), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuCopyTo(NULL, 0, in, 4), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(NULL, out, 0, 4), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuWait(NULL, 0), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuInit(&dev, NULL), TVM_DEVICE_OK);

    /* The whole memory, then pieces at both ends, round-trip byte for byte. */
    pattern(in, size, 1);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, size), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, size), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, size) == 0);
    pattern(in, 96, 2);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 96, in, 96), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 32, in, 7), TVM_DEVICE_OK);
    memset(out, 0, size);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size - 96, 96), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, 96) == 0);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 32, 7), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, 7) == 0);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 39, 1), TVM_DEVICE_OK);
    pattern(in, size, 1);
    CHECK(out[0] == in[39]); /* the byte after the 7 still holds the first pattern */

    /* Out of range: refused, and nothing written. */
    EXPECT(TVMDeviceNpuCopyFrom(&dev, before, size - 8, 8), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 4, in, 5), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size, in, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0xFFFFFFFCu, in, 8), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 4, in, 0xFFFFFFFFu), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size - 1, 2), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0x80000000u, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size - 8, 8), TVM_DEVICE_OK);
    CHECK(memcmp(before, out, 8) == 0);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, NULL, 4), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, NULL, 0, 4), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size, NULL, 0), TVM_DEVICE_OK); /* empty, at the end */

    /* Wait: nothing pending; a job another thread ends; one nobody ends. */
    EXPECT(TVMDeviceNpuWait(&dev, 0), TVM_DEVICE_OK);
    pthread_mutex_lock(&dev.state_lock);
    dev.user.pending = 1;
    pthread_mutex_unlock(&dev.state_lock);
    pthread_create(&thread, NULL, end_job, NULL);
    EXPECT(TVMDeviceNpuWait(&dev, 5000), TVM_DEVICE_OK);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&dev.state_lock);
    dev.user.pending = 1;
    pthread_mutex_unlock(&dev.state_lock);
    EXPECT(TVMDeviceNpuWait(&dev, 30), TVM_DEVICE_ERR_TIMEOUT);
    dev.user.pending = 0;

    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuWait(&dev, 0), TVM_DEVICE_ERR_NOT_READY);
    printf("%d failures\n", failures);
    return failures != 0;
}
