/*
 * Exercises the copy functions of the generated Zephyr device "npu" (new-device npu
 * --platform zephyr --memory 4K) on the host, against the fake headers of
 * platforms/zephyr/fake_include and a driver implemented here through the driver api
 * the owned header declares (as the skeleton driver implements it): NOT_READY before
 * Init, UNSUPPORTED for a driver without the api, byte round trips through the driver,
 * ranges refused before the driver is called, the driver's errno mapped, Wait asking
 * the driver only while a job is pending, and (-DCONFIG_DCACHE) the cache flushed before
 * the driver reads a buffer and invalidated after it wrote one, as Zephyr's
 * sys_cache_data_flush_range/sys_cache_data_invd_range are used for DMA.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tvm/device/npu/zephyr.h"
#include "expect.h"

/* --- the fake kernel (one thread: nothing here blocks) ------------------------------- */

k_tid_t k_current_get(void) { return NULL; }
k_timeout_t tvmdev_fake_k_msec(int32_t ms) { k_timeout_t t = {ms}; return t; }
k_timeout_t tvmdev_fake_k_forever(void) { k_timeout_t t = {-1}; return t; }
int k_mutex_init(struct k_mutex *m) { (void)m; return 0; }
int k_mutex_lock(struct k_mutex *m, k_timeout_t t) { (void)m; (void)t; return 0; }
int k_mutex_unlock(struct k_mutex *m) { (void)m; return 0; }
atomic_val_t atomic_get(const atomic_t *t) { return *t; }
atomic_val_t atomic_set(atomic_t *t, atomic_val_t v) { atomic_val_t o = *t; *t = v; return o; }
atomic_val_t atomic_inc(atomic_t *t) { return (*t)++; }
bool atomic_cas(atomic_t *t, atomic_val_t o, atomic_val_t n)
{
    if (*t != o) {
        return false;
    }
    *t = n;
    return true;
}
bool device_is_ready(const struct device *dev) { (void)dev; return true; }
int pm_device_runtime_get(const struct device *dev) { (void)dev; return 0; }
int pm_device_runtime_put(const struct device *dev) { (void)dev; return 0; }
void tvmdev_fake_log(const char *fmt, ...) { (void)fmt; }

static const void *flushed, *invalidated;
static size_t flushed_n, invalidated_n;
static int cache_calls;

int sys_cache_data_flush_range(void *addr, size_t size)
{
    flushed = addr;
    flushed_n = size;
    cache_calls++;
    return 0;
}

int sys_cache_data_invd_range(void *addr, size_t size)
{
    invalidated = addr;
    invalidated_n = size;
    cache_calls++;
    return 0;
}

/* --- the driver -------------------------------------------------------------------- */

static uint8_t memory[TVM_DEVICE_NPU_MEMORY_SIZE];
static int next_err, calls, waits, wait_err;
static int64_t waited_ticks;

static int take_err(void)
{
    int err = next_err;

    next_err = 0;
    calls++;
    return err;
}

static int drv_write(const struct device *dev, uint32_t addr, const void *src, size_t n)
{
    int err = take_err();

    (void)dev;
    CHECK(flushed == src || cache_calls == 0); /* flushed before the driver reads it */
    if (err == 0) {
        memcpy(&memory[addr], src, n);
    }
    return err;
}

static int drv_read(const struct device *dev, uint32_t addr, void *dst, size_t n)
{
    int err = take_err();

    (void)dev;
    if (err == 0) {
        memcpy(dst, &memory[addr], n);
    }
    return err;
}

static int drv_wait(const struct device *dev, k_timeout_t timeout)
{
    (void)dev;
    waits++;
    waited_ticks = timeout.ticks;
    return wait_err;
}

static const struct tvm_device_npu_driver_api api = {drv_write, drv_read, drv_wait};
static const struct device npu = {"npu0", NULL, NULL, &api};
static const struct device bare = {"bare", NULL, NULL, NULL}; /* a driver without it */

int main(void)
{
    static uint8_t in[TVM_DEVICE_NPU_MEMORY_SIZE], out[TVM_DEVICE_NPU_MEMORY_SIZE];
    const uint32_t size = TVM_DEVICE_NPU_MEMORY_SIZE;
    tvm_device_npu_t dev, other;
    uint32_t i;

    memset(&dev, 0, sizeof dev);
    EXPECT(TVMDeviceNpuCopyTo(NULL, 0, in, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 1), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 1), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuWait(&dev, 5), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuInit(&other, &bare), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&other, 0, in, 1), TVM_DEVICE_ERR_UNSUPPORTED);
    EXPECT(TVMDeviceNpuInit(&dev, &npu), TVM_DEVICE_OK);

    for (i = 0; i < size; i++) {
        in[i] = (uint8_t)(i * 7u + 1u);
    }
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, size), TVM_DEVICE_OK);
    CHECK(memcmp(memory, in, size) == 0);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, size), TVM_DEVICE_OK);
    CHECK(memcmp(out, in, size) == 0);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 3, in + 100, 3), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size - 3, 3), TVM_DEVICE_OK);
    CHECK(memcmp(out, in + 100, 3) == 0);
#ifdef CONFIG_DCACHE
    CHECK(invalidated == out && invalidated_n == 3); /* after the driver wrote it */
    CHECK(flushed == in + 100 && flushed_n == 3);
#else
    CHECK(cache_calls == 0);
#endif

    /* Ranges are refused before the driver sees them. */
    calls = 0;
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 2, in, 3), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0xFFFFFFFFu, in, 2), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, NULL, 0, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size, in, 0), TVM_DEVICE_OK);
    CHECK(calls == 0);

    /* The driver's errors, as the other functions map them. */
    next_err = -EIO;
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_IO);
    next_err = -EBUSY;
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 4), TVM_DEVICE_ERR_BUSY);
    next_err = -EAGAIN;
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_TIMEOUT);

    /* Wait: nothing pending, the driver is not asked; a pending job it waits for. */
    EXPECT(TVMDeviceNpuWait(&dev, 5), TVM_DEVICE_OK);
    CHECK(waits == 0);
    atomic_set(&dev.user.pending, 1);
    wait_err = -EAGAIN;
    EXPECT(TVMDeviceNpuWait(&dev, 25), TVM_DEVICE_ERR_TIMEOUT);
    CHECK(waits == 1 && waited_ticks == 25 && atomic_get(&dev.user.pending) == 1);
    wait_err = -EIO;
    EXPECT(TVMDeviceNpuWait(&dev, 25), TVM_DEVICE_ERR_IO);
    CHECK(atomic_get(&dev.user.pending) == 0);
    wait_err = 0;
    atomic_set(&dev.user.pending, 1);
    EXPECT(TVMDeviceNpuWait(&dev, 25), TVM_DEVICE_OK);
    CHECK(waits == 3 && atomic_get(&dev.user.pending) == 0);

    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 1), TVM_DEVICE_ERR_NOT_READY);
    printf("%d failures\n", failures);
    return failures != 0;
}
