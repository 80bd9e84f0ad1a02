/*
 * tvmdev's Zephyr application: binds each accelerator instance of the model to its
 * devicetree device (DEVICE_DT_GET, checked with device_is_ready), runs the model once,
 * prints the outputs and PASS or FAIL, and ends with the run's status (on native_sim the
 * process exits with it; under QEMU, semihosting carries it out).
 *
 * tvmdev_app.h (generated for the model) lists the devices as
 * TVMDEV_APP_DEVICES(X): X(instance, Kind, kind) for each, the instance being the
 * devicetree node label, and provides tvmdev_app_attach() (called before each device's
 * Init) and tvmdev_app_run() (the model's runs, in as many threads as it was built for).
 */
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include "tvmdev_app.h"

#if defined(CONFIG_ARCH_POSIX)
#include <posix_board_if.h>
#elif defined(CONFIG_SEMIHOST)
#include <zephyr/arch/common/semihost.h>
#endif

#if defined(CONFIG_MINIMAL_LIBC) && !defined(CONFIG_ARCH_POSIX)
/* newlib's libm reports range errors through __errno(); the minimal libc has none. */
static int libm_errno;
int *__errno(void);
int *__errno(void)
{
    return &libm_errno;
}
#endif

#define DECLARE_DEVICE(inst, Kind, kind) static tvm_device_##kind##_t tvm_##inst;
TVMDEV_APP_DEVICES(DECLARE_DEVICE)

static void finish(int status)
{
#if defined(CONFIG_ARCH_POSIX)
    posix_exit(status);
#elif defined(CONFIG_SEMIHOST)
    long block[2] = {0x20026, status}; /* ADP_Stopped_ApplicationExit, status */

    (void)semihost_exec((enum semihost_instr)0x20, block); /* SYS_EXIT_EXTENDED */
#endif
    (void)status;
}

static int bind_devices(void *handles[])
{
    int i = 0;
    int32_t status;

#define BIND_DEVICE(inst, Kind, kind)                                                      \
    do {                                                                                   \
        const struct device *dev = DEVICE_DT_GET(DT_NODELABEL(inst));                      \
                                                                                           \
        if (!device_is_ready(dev)) {                                                       \
            printk("tvmdev: device " #inst " is not ready\n");                             \
            return -1;                                                                     \
        }                                                                                  \
        if (tvmdev_app_attach(i, &tvm_##inst) != 0) {                                      \
            printk("tvmdev: cannot attach " #inst "\n");                                   \
            return -1;                                                                     \
        }                                                                                  \
        status = TVMDevice##Kind##Init(&tvm_##inst, dev);                                  \
        if (status != TVM_DEVICE_OK) {                                                     \
            printk("tvmdev: TVMDevice" #Kind "Init(" #inst ") failed: %d\n", (int)status); \
            return -1;                                                                     \
        }                                                                                  \
        handles[i++] = &tvm_##inst;                                                        \
    } while (0);
    TVMDEV_APP_DEVICES(BIND_DEVICE)
    (void)handles;
    (void)status;
    return i;
}

int main(void)
{
    void *handles[TVMDEV_APP_DEVICE_COUNT + 1];
    int status;

    if (bind_devices(handles) < 0) {
        printk("FAIL\n");
        finish(3);
        return 0;
    }
    status = tvmdev_app_run(handles);
    /* Destroy refuses a device still open or active: a run that unwound badly says so. */
#define DESTROY_DEVICE(inst, Kind, kind)                                                   \
    if (TVMDevice##Kind##Destroy(&tvm_##inst) != TVM_DEVICE_OK) {                          \
        printk("tvmdev: TVMDevice" #Kind "Destroy(" #inst ") failed\n");                   \
        status = status == 0 ? 4 : status;                                                 \
    }
    TVMDEV_APP_DEVICES(DESTROY_DEVICE)
    printk("tvmdev: end\n");
    printk("%s\n", status == 0 ? "PASS" : "FAIL");
    finish(status == 0 ? 0 : 1);
    return 0;
}
