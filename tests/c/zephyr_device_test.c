/*
 * Exercises the generated Zephyr device "woofles" on the host, against a fake kernel
 * (platforms/zephyr/fake_include) implemented here: the return code of each of the six
 * functions in every state. Threads are identities the test switches between; the
 * k_mutex is recursive for its owner, as Zephyr's is. The real kernel runs the
 * threaded tests (zephyr_app/tests).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "tvm/device/woofles/zephyr.h"

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

/* --- the fake kernel ------------------------------------------------------------ */

struct k_thread {
    int id;
};

static struct k_thread threads[2];
static int running; /* the index of the thread that runs */
static k_tid_t mutex_owner;
static int mutex_depth;
static int pm_usage;

k_tid_t k_current_get(void)
{
    return &threads[running];
}

k_timeout_t tvmdev_fake_k_msec(int32_t ms)
{
    k_timeout_t t;

    t.ticks = ms;
    return t;
}

k_timeout_t tvmdev_fake_k_forever(void)
{
    k_timeout_t t;

    t.ticks = -1;
    return t;
}

/* One mutex: the device's. */
int k_mutex_init(struct k_mutex *mutex)
{
    (void)mutex;
    mutex_owner = NULL;
    mutex_depth = 0;
    return 0;
}

int k_mutex_lock(struct k_mutex *mutex, k_timeout_t timeout)
{
    (void)mutex;
    if (mutex_owner != NULL && mutex_owner != k_current_get()) {
        /* Nobody else runs here to release it: any wait times out. */
        return timeout.ticks == 0 ? -EBUSY : -EAGAIN;
    }
    mutex_owner = k_current_get();
    mutex_depth++;
    return 0;
}

int k_mutex_unlock(struct k_mutex *mutex)
{
    (void)mutex;
    if (mutex_owner == NULL) {
        return -EINVAL;
    }
    if (mutex_owner != k_current_get()) {
        return -EPERM;
    }
    if (--mutex_depth == 0) {
        mutex_owner = NULL;
    }
    return 0;
}

atomic_val_t atomic_get(const atomic_t *target)
{
    return *target;
}

atomic_val_t atomic_set(atomic_t *target, atomic_val_t value)
{
    atomic_val_t old = *target;

    *target = value;
    return old;
}

atomic_val_t atomic_inc(atomic_t *target)
{
    return (*target)++;
}

bool atomic_cas(atomic_t *target, atomic_val_t old_value, atomic_val_t new_value)
{
    if (*target != old_value) {
        return false;
    }
    *target = new_value;
    return true;
}

static const struct device npu = {"npu0", NULL, NULL, NULL};
static const struct device broken = {"broken", NULL, NULL, NULL};

bool device_is_ready(const struct device *dev)
{
    return dev != &broken;
}

int pm_device_runtime_get(const struct device *dev)
{
    (void)dev;
    pm_usage++;
    return 0;
}

int pm_device_runtime_put(const struct device *dev)
{
    (void)dev;
    if (pm_usage == 0) {
        return -EALREADY;
    }
    pm_usage--;
    return 0;
}

void tvmdev_fake_log(const char *fmt, ...)
{
    (void)fmt;
}

/* --- the device ----------------------------------------------------------------- */

int main(void)
{
    tvm_device_woofles_t dev;

    EXPECT(TVMDeviceWooflesInit(NULL, &npu), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesInit(&dev, NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesInit(&dev, &broken), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesInit(&dev, &npu), TVM_DEVICE_OK);

    /* Out of order: nothing changes, and the PM usage count is left alone. */
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_ERR_INVALID);

    /* Active: Destroy refuses. Activations count. */
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_OK);

    /* Open in thread 0: a second Open there is refused, not nested. */
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_ERR_BUSY);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_BUSY); /* open, even by itself */

    /* Thread 1 cannot open, close or destroy it. */
    running = 1;
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_ERR_TIMEOUT);
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_BUSY);

    /* One Close releases it: thread 1 may open it then. */
    running = 0;
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_ERR_INVALID);
    if (mutex_owner != NULL) {
        fprintf(stderr, "the mutex is still held after Close\n");
        failures++;
    }
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_OK);
    running = 1;
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_OK);

    /* Neither active nor open: Destroy, once. */
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesDestroy(NULL), TVM_DEVICE_ERR_INVALID);
    if (pm_usage != 0) {
        fprintf(stderr, "runtime PM usage is %d at the end, want 0\n", pm_usage);
        failures++;
    }
    printf("%d failures\n", failures);
    return failures != 0;
}
