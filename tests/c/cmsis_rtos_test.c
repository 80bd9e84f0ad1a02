/*
 * The generated CMSIS-RTOS2 device "npu" on the fake kernel of fake_cmsis_rtos2.c (built
 * as RTX5 or as CMSIS-FreeRTOS) and a CMSIS-Driver that is slow to power up and down:
 * one check per defect of issue 22 (the kernel before it starts, Destroy from an
 * interrupt, static mutex memory, Close by a thread that does not hold the device, a
 * second Open by the holder, the per-instance Open timeout, Activate/Deactivate from
 * several threads). Each prints what it found; the last line counts failures.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fake_cmsis_rtos2.h"
#include "tvm/device/npu/cmsis.h"

#ifndef THREADS
#define THREADS 3
#endif
#ifndef ITERATIONS
#define ITERATIONS 200
#endif
#define SLOW_POWER_US 300 /* PowerControl takes this long: a race has time to show */

static int failures;

#define EXPECT(call, want)                                                             \
    do {                                                                               \
        int32_t got_ = (call);                                                         \
        if (got_ != (want)) {                                                          \
            printf("%s:%d: %s = %s, want %s\n", __FILE__, __LINE__, #call,             \
                   TVMDeviceStatusName(got_), TVMDeviceStatusName(want));              \
            __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);                        \
        }                                                                              \
    } while (0)

#define CHECK(cond, ...)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            printf("%s:%d: ", __FILE__, __LINE__);                                     \
            printf(__VA_ARGS__);                                                       \
            printf("\n");                                                              \
            failures++;                                                                \
        }                                                                              \
    } while (0)

/* ---- a CMSIS-Driver that takes SLOW_POWER_US to power up or down ---- */
static int powered, ups, downs, calls_off, in_power, overlaps;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000L};

    nanosleep(&ts, NULL);
}

static int32_t drv_initialize(FAKE_EVENT_T cb)
{
    (void)cb;
    return ARM_DRIVER_OK;
}

static int32_t drv_uninitialize(void) { return ARM_DRIVER_OK; }

/* Powered only when a power-up has finished; off from the start of a power-down, which
 * also takes its time. Two calls at once (one thread powering up while another powers
 * down) are counted: no driver expects them. */
static int32_t drv_power(ARM_POWER_STATE state)
{
    if (__atomic_add_fetch(&in_power, 1, __ATOMIC_SEQ_CST) > 1) {
        __atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
    }
    if (state == ARM_POWER_FULL) {
        pause_us(SLOW_POWER_US);
        __atomic_store_n(&powered, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&ups, 1, __ATOMIC_SEQ_CST);
    } else if (state == ARM_POWER_OFF) {
        pause_us(SLOW_POWER_US);
        __atomic_store_n(&powered, 0, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&downs, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_sub_fetch(&in_power, 1, __ATOMIC_SEQ_CST);
    return ARM_DRIVER_OK;
}

static FAKE_DRIVER_T driver = {
    .Initialize = drv_initialize,
    .Uninitialize = drv_uninitialize,
    .PowerControl = drv_power,
};

/* A kernel call on the device: counted when the peripheral is off. */
static void kernel_call(void)
{
    int i;

    for (i = 0; i < 3; i++) {
        if (!__atomic_load_n(&powered, __ATOMIC_SEQ_CST)) {
            __atomic_add_fetch(&calls_off, 1, __ATOMIC_SEQ_CST);
        }
        pause_us(20);
    }
}

static tvm_device_npu_t dev;
static int runs[THREADS]; /* per thread, Open-Close pairs completed */

/* Run fn in another kernel thread and wait for it. */
static void in_other_thread(void *(*fn)(void *))
{
    pthread_t t;

    pthread_create(&t, NULL, fn, NULL);
    pthread_join(t, NULL);
}

/* Defect 6: the rule before the kernel starts is TVM_DEVICE_ERR_NOT_READY. */
static void before_start(void)
{
    fake_rtos_set_state(osKernelInactive);
    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_ERR_NOT_READY);
    fake_rtos_set_state(osKernelReady); /* after osKernelInitialize, before osKernelStart */
    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_ERR_NOT_READY);
    fake_rtos_set_state(osKernelRunning);
    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuActivate(&dev), TVM_DEVICE_OK);
    fake_rtos_set_state(osKernelLocked);
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_ERR_NOT_READY);
    fake_rtos_set_state(osKernelRunning);
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    CHECK(fake_rtos_live_mutexes() == 0, "%d mutexes left", fake_rtos_live_mutexes());
    printf("before start: checked\n");
}

/* Defect 2: from an interrupt Destroy refuses and leaks nothing, cycle after cycle. */
static void destroy_from_interrupt(void)
{
    int cycle;

    for (cycle = 0; cycle < 20; cycle++) {
        EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_OK);
        fake_rtos_set_isr(1);
        EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_UNSUPPORTED);
        EXPECT(TVMDeviceNpuActivate(&dev), TVM_DEVICE_ERR_UNSUPPORTED);
        EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_ERR_UNSUPPORTED);
        fake_rtos_set_isr(0);
        EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    }
    CHECK(fake_rtos_live_mutexes() == 0, "%d mutexes left", fake_rtos_live_mutexes());
    printf("destroy from an interrupt: checked\n");
}

static void *close_elsewhere(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_ERR_INVALID);
    return NULL;
}

static void *open_elsewhere_busy(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_BUSY);
    return NULL;
}

static void *destroy_elsewhere_busy(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_BUSY);
    return NULL;
}

static void *open_elsewhere_times_out(void *arg)
{
    struct timespec t0, t1;
    long ms;

    (void)arg;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_TIMEOUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
    CHECK(ms >= 15, "Open gave up after %ld ms, not 20", ms);
    return NULL;
}

/* Defects 4, 5 and 7: who may Close, a second Open, the per-instance timeout. */
static void holding(void)
{
    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_OK);
    /* Defect 5: with the default timeout (osWaitForever), at once. */
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_BUSY);
    /* Defect 4: another thread's Close releases nothing. */
    in_other_thread(close_elsewhere);
    CHECK(fake_rtos_non_owner_releases() == 0, "a non-owner released the device");
    in_other_thread(destroy_elsewhere_busy);
    EXPECT(TVMDeviceNpuSetOpenTimeout(&dev, 0U), TVM_DEVICE_OK);
    in_other_thread(open_elsewhere_busy); /* still held: a third thread cannot Open */
    /* Defect 7: this instance waits 20 ticks. */
    EXPECT(TVMDeviceNpuSetOpenTimeout(NULL, 20U), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuSetOpenTimeout(&dev, 20U), TVM_DEVICE_OK);
    in_other_thread(open_elsewhere_times_out);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_BUSY); /* held by this thread */
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_BUSY); /* active */
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuSetOpenTimeout(&dev, 20U), TVM_DEVICE_ERR_NOT_READY);
    printf("holding: checked\n");
}

/* Defect 3: the mutexes in the instance, at the exact size the kernel wants. */
static void static_memory(void)
{
#ifdef TVM_DEVICE_NPU_MUTEX_CB_TYPE
    int before = fake_rtos_static_mutexes();

    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_OK);
    CHECK(fake_rtos_static_mutexes() - before == 2, "%d static mutexes, want 2",
          fake_rtos_static_mutexes() - before);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    printf("static memory: checked\n");
#endif
}

static void *worker(void *arg)
{
    int *opens = arg;
    long idle = 50L * (long)(opens - runs + 1); /* each thread its own pace */
    int i;

    for (i = 0; i < ITERATIONS; i++) {
        int32_t status = TVMDeviceNpuActivate(&dev);

        EXPECT(status, TVM_DEVICE_OK);
        if (status != TVM_DEVICE_OK) {
            continue;
        }
        if (!__atomic_load_n(&powered, __ATOMIC_SEQ_CST)) {
            __atomic_add_fetch(&calls_off, 1, __ATOMIC_SEQ_CST);
        }
        EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_OK);
        kernel_call();
        EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_OK);
        (*opens)++;
        EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_OK);
        pause_us(idle); /* the device goes idle now and then: power goes down and up */
    }
    return NULL;
}

/* Defect 1: THREADS threads share the device; no call finds the peripheral off. */
static void threads(void)
{
    pthread_t t[THREADS];
    int i;

    EXPECT(TVMDeviceNpuInit(&dev, &driver), TVM_DEVICE_OK);
    ups = downs = calls_off = overlaps = 0;
    for (i = 0; i < THREADS; i++) {
        runs[i] = 0;
        pthread_create(&t[i], NULL, worker, &runs[i]);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(runs[i] == ITERATIONS, "thread %d: %d of %d runs", i, runs[i], ITERATIONS);
    }
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    printf("threads: %d power-ups, %d power-downs, %d calls while off, %d PowerControl "
           "calls at once\n", ups, downs, calls_off, overlaps);
    CHECK(overlaps == 0, "%d PowerControl calls overlapped another", overlaps);
    CHECK(ups == downs, "%d power-ups against %d power-downs", ups, downs);
    CHECK(calls_off == 0, "%d calls while the peripheral was off", calls_off);
}

/* Each check by name (all of them without arguments), one per defect of issue 22. */
static const struct {
    const char *name;
    void (*fn)(void);
} checks[] = {
    {"before_start", before_start},     /* defect 6 */
    {"destroy_isr", destroy_from_interrupt}, /* defect 2 */
    {"holding", holding},               /* defects 4, 5, 7 */
    {"static_memory", static_memory},   /* defect 3 */
    {"threads", threads},               /* defect 1 */
};

int main(int argc, char **argv)
{
    unsigned i;

    memset(&dev, 0, sizeof(dev));
    fake_rtos_set_state(osKernelRunning);
    for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        if (argc < 2 || strcmp(argv[1], checks[i].name) == 0) {
            checks[i].fn();
        }
    }
    CHECK(fake_rtos_live_mutexes() == 0, "%d mutexes left", fake_rtos_live_mutexes());
    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
