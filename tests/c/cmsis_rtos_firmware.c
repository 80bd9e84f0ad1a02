/*
 * The generated CMSIS-RTOS2 device "npu" on a real kernel (Keil RTX5, or FreeRTOS through
 * CMSIS-FreeRTOS), under QEMU: issue 22's defects 1-7, each a check that prints what it
 * found. The device sits on an in-memory SPI driver that takes SLOW_TICKS to power up or
 * down. "From an interrupt" is the NMI handler, which both kernels see as handler mode.
 * The last line is "N failures"; the exit status is N (semihosting).
 */
#include <stdint.h>

#include "RTE_Components.h" /* the core's CMSIS header: NMI pending, barriers */
#include CMSIS_device_header
#include "cmsis_os2.h"
#include "semihosting.h"
#include "tvm/device/npu/cmsis.h"

#ifndef THREADS
#define THREADS 3
#endif
#ifndef ITERATIONS
#define ITERATIONS 50
#endif
#ifndef ISR_CYCLES
#define ISR_CYCLES 3000 /* more than either kernel's mutexes before a leak shows */
#endif
#ifndef CHECKS
#define CHECKS 0xFU /* 1: Destroy from an interrupt, 2: holding, 4: threads, 8: before start */
#endif
#define SLOW_TICKS 2U

static volatile int failures;

static void put(const char *text) { tvmdev_semihosting_write0(text); }

static void put_int(int32_t value)
{
    char text[12];
    int i = 11;
    uint32_t magnitude = value < 0 ? (uint32_t)0 - (uint32_t)value : (uint32_t)value;

    text[i--] = '\0';
    do {
        text[i--] = (char)('0' + magnitude % 10U);
        magnitude /= 10U;
    } while (magnitude != 0U);
    if (value < 0) {
        text[i--] = '-';
    }
    put(&text[i + 1]);
}

static void expect(int line, const char *what, int32_t got, int32_t want)
{
    if (got != want) {
        put("line ");
        put_int(line);
        put(": ");
        put(what);
        put(" = ");
        put(TVMDeviceStatusName(got));
        put(", want ");
        put(TVMDeviceStatusName(want));
        put("\n");
        failures++;
    }
}

#define EXPECT(call, want) expect(__LINE__, #call, (call), (want))

static void check(int line, int ok, const char *what, int32_t value)
{
    if (!ok) {
        put("line ");
        put_int(line);
        put(": ");
        put(what);
        put(" ");
        put_int(value);
        put("\n");
        failures++;
    }
}

#define CHECK(ok, what, value) check(__LINE__, (ok), (what), (value))

/* ---- an in-memory SPI driver, slow to power ---- */
static volatile int powered, ups, downs, in_power, overlaps;

static int32_t spi_initialize(ARM_SPI_SignalEvent_t cb)
{
    (void)cb;
    return ARM_DRIVER_OK;
}

static int32_t spi_uninitialize(void) { return ARM_DRIVER_OK; }

static int32_t spi_power(ARM_POWER_STATE state)
{
    if (++in_power > 1) {
        overlaps++;
    }
    (void)osDelay(SLOW_TICKS); /* powering up or down takes two ticks */
    if (state == ARM_POWER_FULL) {
        powered = 1;
        ups++;
    } else if (state == ARM_POWER_OFF) {
        powered = 0;
        downs++;
    }
    in_power--;
    return ARM_DRIVER_OK;
}

static ARM_DRIVER_SPI spi = {
    .Initialize = spi_initialize,
    .Uninitialize = spi_uninitialize,
    .PowerControl = spi_power,
};

static tvm_device_npu_t dev;

/* ---- "from an interrupt": the NMI handler runs the call asked for ---- */
enum { NMI_DESTROY, NMI_CLOSE, NMI_ACTIVATE, NMI_OPEN };
static volatile int nmi_call;
static volatile int32_t nmi_status;

void NMI_Handler(void);
void NMI_Handler(void)
{
    switch (nmi_call) {
    case NMI_DESTROY:
        nmi_status = TVMDeviceNpuDestroy(&dev);
        break;
    case NMI_CLOSE:
        nmi_status = TVMDeviceNpuClose(&dev);
        break;
    case NMI_ACTIVATE:
        nmi_status = TVMDeviceNpuActivate(&dev);
        break;
    default:
        nmi_status = TVMDeviceNpuOpen(&dev);
        break;
    }
}

static int32_t from_interrupt(int call)
{
    nmi_call = call;
    nmi_status = 12345;
    SCB->ICSR = SCB_ICSR_NMIPENDSET_Msk;
    __DSB();
    __ISB();
    return nmi_status;
}

/* ---- other threads for one call each ---- */
static osThreadId_t run_in_thread(osThreadFunc_t fn, osPriority_t priority)
{
    osThreadAttr_t attr = {0};

    attr.stack_size = 1024U;
    attr.priority = priority;
    return osThreadNew(fn, NULL, &attr);
}

static volatile int helper_done;

static void close_elsewhere(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_ERR_INVALID);
    helper_done = 1;
    (void)osThreadTerminate(osThreadGetId());
}

static void open_elsewhere_busy(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_BUSY);
    helper_done = 1;
    (void)osThreadTerminate(osThreadGetId());
}

static void open_elsewhere_times_out(void *arg)
{
    uint32_t t0 = osKernelGetTickCount();

    (void)arg;
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_TIMEOUT);
    CHECK(osKernelGetTickCount() - t0 >= 20U, "Open gave up after ticks:",
          (int32_t)(osKernelGetTickCount() - t0));
    helper_done = 1;
    (void)osThreadTerminate(osThreadGetId());
}

static void wait_for_helper(osThreadFunc_t fn)
{
    helper_done = 0;
    /* above this thread's priority: it runs at once, to its end or its wait */
    CHECK(run_in_thread(fn, osPriorityAboveNormal) != NULL, "osThreadNew failed", 0);
    while (!helper_done) {
        (void)osDelay(1U);
    }
}

/* Defect 2 */
static void destroy_from_interrupt(void)
{
    int cycle;

    for (cycle = 0; cycle < ISR_CYCLES && failures == 0; cycle++) {
        EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_OK);
        EXPECT(from_interrupt(NMI_DESTROY), TVM_DEVICE_ERR_UNSUPPORTED);
        EXPECT(from_interrupt(NMI_ACTIVATE), TVM_DEVICE_ERR_UNSUPPORTED);
        EXPECT(from_interrupt(NMI_CLOSE), TVM_DEVICE_ERR_UNSUPPORTED);
        EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    }
    put("destroy from an interrupt: ");
    put_int(cycle);
    put(" cycles\n");
}

/* Defects 4, 5, 7 */
static void holding(void)
{
    EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuOpen(&dev), TVM_DEVICE_ERR_BUSY); /* default: osWaitForever */
    EXPECT(from_interrupt(NMI_OPEN), TVM_DEVICE_ERR_UNSUPPORTED);
    wait_for_helper(close_elsewhere);
    EXPECT(TVMDeviceNpuSetOpenTimeout(&dev, 0U), TVM_DEVICE_OK);
    wait_for_helper(open_elsewhere_busy);
    EXPECT(TVMDeviceNpuSetOpenTimeout(&dev, 20U), TVM_DEVICE_OK);
    wait_for_helper(open_elsewhere_times_out);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuClose(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    put("holding: checked\n");
}

/* Defect 1: THREADS threads at different priorities share the device. */
static volatile int runs[THREADS], calls_off[THREADS], statuses_bad[THREADS];
static volatile int workers_left;

static void kernel_call(int me)
{
    int i;

    for (i = 0; i < 2; i++) {
        if (!powered) {
            calls_off[me]++;
        }
        (void)osDelay(1U);
    }
}

static void worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    int i;

    for (i = 0; i < ITERATIONS; i++) {
        if (TVMDeviceNpuActivate(&dev) != TVM_DEVICE_OK) {
            statuses_bad[me]++;
            continue;
        }
        if (!powered) {
            calls_off[me]++;
        }
        if (TVMDeviceNpuOpen(&dev) == TVM_DEVICE_OK) {
            kernel_call(me);
            statuses_bad[me] += TVMDeviceNpuClose(&dev) != TVM_DEVICE_OK;
            runs[me]++;
        } else {
            statuses_bad[me]++;
        }
        statuses_bad[me] += TVMDeviceNpuDeactivate(&dev) != TVM_DEVICE_OK;
        (void)osDelay(4U * ((uint32_t)me + 1U)); /* idle now and then: power cycles */
    }
    workers_left--;
    (void)osThreadTerminate(osThreadGetId());
}

static void threads(void)
{
    static const osPriority_t priority[] = {osPriorityBelowNormal, osPriorityNormal,
                                            osPriorityAboveNormal};
    osThreadAttr_t attr = {0};
    int i;

    EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_OK);
    workers_left = THREADS;
    for (i = 0; i < THREADS; i++) {
        attr.stack_size = 1024U;
        attr.priority = priority[i % 3];
        CHECK(osThreadNew(worker, (void *)(intptr_t)i, &attr) != NULL, "osThreadNew", i);
    }
    while (workers_left > 0) {
        (void)osDelay(10U);
    }
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    for (i = 0; i < THREADS; i++) {
        put("thread ");
        put_int(i);
        put(": runs=");
        put_int(runs[i]);
        put(" calls_off=");
        put_int(calls_off[i]);
        put(" bad=");
        put_int(statuses_bad[i]);
        put("\n");
        CHECK(runs[i] == ITERATIONS && calls_off[i] == 0 && statuses_bad[i] == 0,
              "thread", i);
    }
    put("power: ups=");
    put_int(ups);
    put(" downs=");
    put_int(downs);
    put(" overlaps=");
    put_int(overlaps);
    put("\n");
    CHECK(ups == downs && overlaps == 0, "power ups - downs:", ups - downs);
}

static void app(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
#ifdef TVM_DEVICE_NPU_MUTEX_CB_TYPE
    put("static memory: checked\n"); /* defect 3: Init above placed both mutexes */
#endif
    if (CHECKS & 1U) {
        destroy_from_interrupt();
    }
    if (CHECKS & 2U) {
        holding();
    }
    if (CHECKS & 4U) {
        threads();
    }
    put_int(failures);
    put(" failures\n");
    tvmdev_semihosting_exit(failures);
}

int main(void)
{
    osThreadAttr_t attr = {0};

    /* Defect 6: before the kernel runs, NOT_READY. */
    if (CHECKS & 8U) {
        EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_ERR_NOT_READY);
    }
    if (osKernelInitialize() != osOK) {
        put("osKernelInitialize failed\n");
        return 2;
    }
    if (CHECKS & 8U) {
        EXPECT(TVMDeviceNpuInit(&dev, &spi), TVM_DEVICE_ERR_NOT_READY);
        put("before start: checked\n");
    }
    attr.stack_size = 2048U;
    attr.priority = osPriorityNormal;
    if (osThreadNew(app, NULL, &attr) == NULL) {
        put("osThreadNew failed\n");
        return 2;
    }
    (void)osKernelStart();
    return 3; /* not reached */
}
