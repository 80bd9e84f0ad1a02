/*
 * The generated Zephyr device API for "woofles", on a real Zephyr kernel:
 * - Open/Close serialise two threads that share one device;
 * - Open returns TVM_DEVICE_ERR_TIMEOUT while another thread holds the device
 *   (CONFIG_TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=50);
 * - Init rejects NULL, and a device whose driver failed to initialise (not ready).
 */
#include <errno.h>

#include <zephyr/device.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/atomic.h>
#include <zephyr/ztest.h>

#include "tvm/device/woofles/zephyr.h"

#define STACK_SIZE 2048
#define ROUNDS 50

static tvm_device_woofles_t shared;
static atomic_t inside;
static atomic_t max_inside;
static atomic_t entries;
static atomic_t failures;

K_THREAD_STACK_DEFINE(stack_a, STACK_SIZE);
K_THREAD_STACK_DEFINE(stack_b, STACK_SIZE);
static struct k_thread thread_a, thread_b;
static K_SEM_DEFINE(held, 0, 1);

/* A device whose driver fails to initialise: never ready. */
static int broken_init(const struct device *dev)
{
    ARG_UNUSED(dev);
    return -EIO;
}
DEVICE_DEFINE(broken_npu, "broken_npu", broken_init, NULL, NULL, NULL, POST_KERNEL,
              CONFIG_KERNEL_INIT_PRIORITY_DEVICE, NULL);

static void worker(void *p1, void *p2, void *p3)
{
    int i;

    ARG_UNUSED(p1);
    ARG_UNUSED(p2);
    ARG_UNUSED(p3);
    for (i = 0; i < ROUNDS; i++) {
        atomic_val_t now;

        if (TVMDeviceWooflesOpen(&shared) != TVM_DEVICE_OK) {
            atomic_inc(&failures);
            continue;
        }
        now = atomic_inc(&inside) + 1;
        if (now > atomic_get(&max_inside)) {
            atomic_set(&max_inside, now);
        }
        atomic_inc(&entries);
        k_sleep(K_USEC(200)); /* the other thread gets the CPU while this one holds it */
        atomic_dec(&inside);
        if (TVMDeviceWooflesClose(&shared) != TVM_DEVICE_OK) {
            atomic_inc(&failures);
        }
        k_yield();
    }
}

static void holder(void *p1, void *p2, void *p3)
{
    ARG_UNUSED(p1);
    ARG_UNUSED(p2);
    ARG_UNUSED(p3);
    zassert_equal(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK);
    k_sem_give(&held);
    k_sleep(K_MSEC(300));
    zassert_equal(TVMDeviceWooflesClose(&shared), TVM_DEVICE_OK);
}

static void *setup(void)
{
    const struct device *npu0 = DEVICE_DT_GET(DT_NODELABEL(npu0));

    zassert_true(device_is_ready(npu0), "npu0 is not ready");
    zassert_equal(TVMDeviceWooflesInit(&shared, npu0), TVM_DEVICE_OK);
    zassert_equal(TVMDeviceWooflesActivate(&shared), TVM_DEVICE_OK);
    return NULL;
}

ZTEST(tvm_device_api, test_open_close_serialise_two_threads)
{
    atomic_set(&inside, 0);
    atomic_set(&max_inside, 0);
    atomic_set(&entries, 0);
    atomic_set(&failures, 0);
    k_thread_create(&thread_a, stack_a, STACK_SIZE, worker, NULL, NULL, NULL,
                    K_PRIO_PREEMPT(5), 0, K_NO_WAIT);
    k_thread_create(&thread_b, stack_b, STACK_SIZE, worker, NULL, NULL, NULL,
                    K_PRIO_PREEMPT(5), 0, K_NO_WAIT);
    k_thread_join(&thread_a, K_FOREVER);
    k_thread_join(&thread_b, K_FOREVER);
    zassert_equal(atomic_get(&failures), 0, "Open/Close failed");
    zassert_equal(atomic_get(&entries), 2 * ROUNDS);
    zassert_equal(atomic_get(&max_inside), 1, "two threads held the device at once");
}

ZTEST(tvm_device_api, test_open_times_out_while_another_thread_holds_it)
{
    int64_t start;

    k_thread_create(&thread_a, stack_a, STACK_SIZE, holder, NULL, NULL, NULL,
                    K_PRIO_PREEMPT(5), 0, K_NO_WAIT);
    zassert_equal(k_sem_take(&held, K_SECONDS(2)), 0);
    start = k_uptime_get();
    zassert_equal(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_ERR_TIMEOUT);
    zassert_true(k_uptime_get() - start >= 40, "Open gave up before its timeout");
    k_thread_join(&thread_a, K_FOREVER);
    zassert_equal(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK); /* free again */
    zassert_equal(TVMDeviceWooflesClose(&shared), TVM_DEVICE_OK);
}

ZTEST(tvm_device_api, test_init_rejects_null_and_not_ready_devices)
{
    tvm_device_woofles_t dev;

    zassert_false(device_is_ready(DEVICE_GET(broken_npu)));
    zassert_equal(TVMDeviceWooflesInit(&dev, DEVICE_GET(broken_npu)),
                  TVM_DEVICE_ERR_NOT_READY);
    zassert_equal(TVMDeviceWooflesInit(&dev, NULL), TVM_DEVICE_ERR_INVALID);
    zassert_equal(TVMDeviceWooflesInit(NULL, DEVICE_DT_GET(DT_NODELABEL(npu0))),
                  TVM_DEVICE_ERR_INVALID);
}

ZTEST_SUITE(tvm_device_api, NULL, setup, NULL, NULL, NULL);
