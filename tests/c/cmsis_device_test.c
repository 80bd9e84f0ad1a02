/*
 * Exercises the generated CMSIS device "uart_accel" against a fake CMSIS-Driver (and,
 * with -DWITH_RTOS, the fake kernel of fake_cmsis_rtos2.c): Initialize, PowerControl
 * and Uninitialize are called as promised and each ARM_DRIVER_* code maps to a status.
 * Built for the host and run; also cross-compiled for Cortex-M3 (not run there).
 */
#include <stdio.h>
#include <string.h>

#include "tvm/device/uart_accel/cmsis.h"
#include "expect.h"
#ifdef WITH_RTOS
#include "fake_cmsis_rtos2.h"
#endif

static int n_init, n_uninit, n_power_full, n_power_off;
static int32_t next_result; /* what the fake driver returns next */

static int32_t take_result(void)
{
    int32_t r = next_result;
    next_result = ARM_DRIVER_OK;
    return r;
}

static int32_t fake_initialize(FAKE_EVENT_T cb)
{
    (void)cb;
    n_init++;
    return take_result();
}

static int32_t fake_uninitialize(void)
{
    n_uninit++;
    return take_result();
}

static int32_t fake_power(ARM_POWER_STATE state)
{
    if (state == ARM_POWER_FULL) {
        n_power_full++;
    } else if (state == ARM_POWER_OFF) {
        n_power_off++;
    }
    return take_result();
}

static FAKE_DRIVER_T fake_driver = {
    .Initialize = fake_initialize,
    .Uninitialize = fake_uninitialize,
    .PowerControl = fake_power,
};


int main(void)
{
    tvm_device_uart_accel_t dev;
    static const struct {
        int32_t driver;
        int32_t status;
    } map[] = {
        {ARM_DRIVER_ERROR, TVM_DEVICE_ERR_IO},
        {ARM_DRIVER_ERROR_BUSY, TVM_DEVICE_ERR_BUSY},
        {ARM_DRIVER_ERROR_TIMEOUT, TVM_DEVICE_ERR_TIMEOUT},
        {ARM_DRIVER_ERROR_UNSUPPORTED, TVM_DEVICE_ERR_UNSUPPORTED},
        {ARM_DRIVER_ERROR_PARAMETER, TVM_DEVICE_ERR_INVALID},
        {ARM_DRIVER_ERROR_SPECIFIC, TVM_DEVICE_ERR_IO},
    };
    unsigned i;

    memset(&dev, 0, sizeof(dev));
#ifdef WITH_RTOS
    fake_rtos_set_state(osKernelRunning);
#endif
    EXPECT(TVMDeviceUartAccelInit(NULL, &fake_driver), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceUartAccelInit(&dev, NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceUartAccelActivate(&dev), TVM_DEVICE_ERR_NOT_READY);

    /* Each ARM_DRIVER_* result of Initialize maps to its status; the device stays unbound. */
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        next_result = map[i].driver;
        EXPECT(TVMDeviceUartAccelInit(&dev, &fake_driver), map[i].status);
        EXPECT(TVMDeviceUartAccelOpen(&dev), TVM_DEVICE_ERR_NOT_READY);
    }

    EXPECT(TVMDeviceUartAccelInit(&dev, &fake_driver), TVM_DEVICE_OK);
    EXPECT(TVMDeviceUartAccelOpen(&dev), TVM_DEVICE_ERR_NOT_READY); /* not active */
    EXPECT(TVMDeviceUartAccelDeactivate(&dev), TVM_DEVICE_ERR_INVALID);

    next_result = ARM_DRIVER_ERROR_TIMEOUT; /* PowerControl fails: not active */
    EXPECT(TVMDeviceUartAccelActivate(&dev), TVM_DEVICE_ERR_TIMEOUT);
    EXPECT(TVMDeviceUartAccelOpen(&dev), TVM_DEVICE_ERR_NOT_READY);

    EXPECT(TVMDeviceUartAccelActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceUartAccelActivate(&dev), TVM_DEVICE_OK); /* counted: no power call */
    EXPECT(TVMDeviceUartAccelOpen(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceUartAccelOpen(&dev), TVM_DEVICE_ERR_BUSY); /* at once, RTOS or not */
    EXPECT(TVMDeviceUartAccelDestroy(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceUartAccelClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceUartAccelClose(&dev), TVM_DEVICE_ERR_INVALID); /* not open */
    EXPECT(TVMDeviceUartAccelDeactivate(&dev), TVM_DEVICE_OK);
    next_result = ARM_DRIVER_ERROR_BUSY; /* the final power-off fails */
    EXPECT(TVMDeviceUartAccelDeactivate(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceUartAccelDeactivate(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceUartAccelDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceUartAccelDestroy(&dev), TVM_DEVICE_ERR_NOT_READY);

    if (n_power_full != 2 || n_power_off != 1 || n_uninit != 1 || n_init != 7) {
        printf("driver calls: init=%d power_full=%d power_off=%d uninit=%d\n", n_init,
               n_power_full, n_power_off, n_uninit);
        failures++;
    }
#ifdef WITH_RTOS
    if (fake_rtos_live_mutexes() != 0) {
        printf("mutexes left: %d\n", fake_rtos_live_mutexes());
        failures++;
    }
#endif
    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
