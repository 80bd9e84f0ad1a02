/*
 * Exercises the generated POSIX device "woofles": the return code of each of the six
 * functions in every state, that Open from two threads serialises, and (built with
 * -DTVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=50) that Open times out on a held device.
 *
 * Nothing here depends on scheduling or on how long a sleep lasts, so it passes on a
 * loaded machine and under ThreadSanitizer: threads hand over with gates (a flag under a
 * mutex and condition variable), and a worker whose timed Open expires while the other
 * worker holds the device (it may be preempted for longer than the timeout) retries.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tvm/device/woofles/posix.h"

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

static tvm_device_woofles_t shared;
static volatile int inside;
static int max_inside;
static int entries;
static pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

/* Open, retrying while a timed Open expires: with a timeout the other worker may hold
 * the device past it (preempted on a busy machine), which is a timeout, not a bug. */
static int32_t open_waiting(tvm_device_woofles_t *dev)
{
    int32_t status;
    do {
        status = TVMDeviceWooflesOpen(dev);
    } while (TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS >= 0 && status == TVM_DEVICE_ERR_TIMEOUT);
    return status;
}

static void *worker(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 200; i++) {
        EXPECT(TVMDeviceWooflesActivate(&shared), TVM_DEVICE_OK);
        EXPECT(open_waiting(&shared), TVM_DEVICE_OK);
        pthread_mutex_lock(&stats);
        inside++;
        if (inside > max_inside) {
            max_inside = inside;
        }
        entries++;
        pthread_mutex_unlock(&stats);
        pause_us(50);
        pthread_mutex_lock(&stats);
        inside--;
        pthread_mutex_unlock(&stats);
        EXPECT(TVMDeviceWooflesClose(&shared), TVM_DEVICE_OK);
        EXPECT(TVMDeviceWooflesDeactivate(&shared), TVM_DEVICE_OK);
    }
    return NULL;
}

#if TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS >= 0
/* A one-shot signal from one thread to another. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int set;
} gate_t;

#define GATE_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

static void gate_open(gate_t *g)
{
    pthread_mutex_lock(&g->mu);
    g->set = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_wait(gate_t *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->set) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static gate_t held = GATE_INIT;  /* the holder has the device open */
static gate_t tried = GATE_INIT; /* main's Open has returned: the holder may close */

static void *holder(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK);
    gate_open(&held);
    gate_wait(&tried);
    EXPECT(TVMDeviceWooflesClose(&shared), TVM_DEVICE_OK);
    return NULL;
}
#endif

int main(void)
{
    static tvm_device_woofles_t fresh; /* zeroed: never initialised */
    tvm_device_woofles_t dev;
    int ctx = 42;
    pthread_t a, b;

    /* Every function refuses NULL, and a device that was never initialised. */
    EXPECT(TVMDeviceWooflesInit(NULL, &ctx), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesActivate(NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesOpen(NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesClose(NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesDeactivate(NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesDestroy(NULL), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceWooflesActivate(&fresh), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesOpen(&fresh), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesClose(&fresh), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesDeactivate(&fresh), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceWooflesDestroy(&fresh), TVM_DEVICE_ERR_NOT_READY);

    /* The life cycle, with the misuses the executor must never commit. */
    EXPECT(TVMDeviceWooflesInit(&dev, &ctx), TVM_DEVICE_OK);
    if (dev.ctx != &ctx) {
        fprintf(stderr, "Init did not keep the context pointer\n");
        failures++;
    }
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_ERR_NOT_READY);      /* not active */
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_ERR_INVALID);  /* not active */
#ifndef __SANITIZE_THREAD__ /* ThreadSanitizer reports this deliberate misuse */
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_ERR_INVALID);       /* not open */
#endif
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesOpen(&dev), TVM_DEVICE_ERR_BUSY);           /* held by us */
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_BUSY);        /* active */
    EXPECT(TVMDeviceWooflesClose(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDestroy(&dev), TVM_DEVICE_ERR_NOT_READY);   /* twice */
    EXPECT(TVMDeviceWooflesActivate(&dev), TVM_DEVICE_ERR_NOT_READY);  /* destroyed */

    /* Two threads: Open/Close must serialise them. */
    EXPECT(TVMDeviceWooflesInit(&shared, NULL), TVM_DEVICE_OK);
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    if (max_inside != 1 || entries != 400) {
        fprintf(stderr, "not serialised: max_inside=%d entries=%d\n", max_inside, entries);
        failures++;
    }

#if TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS >= 0
    /* Another thread holds the device until our Open has timed out. */
    EXPECT(TVMDeviceWooflesActivate(&shared), TVM_DEVICE_OK);
    pthread_create(&a, NULL, holder, NULL);
    gate_wait(&held);
    EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_ERR_TIMEOUT);
    gate_open(&tried);
    pthread_join(a, NULL);
    EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesClose(&shared), TVM_DEVICE_OK);
    EXPECT(TVMDeviceWooflesDeactivate(&shared), TVM_DEVICE_OK);
    printf("timeout checked\n");
#endif
    EXPECT(TVMDeviceWooflesDestroy(&shared), TVM_DEVICE_OK);

    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
