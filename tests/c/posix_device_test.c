/*
 * Exercises the generated POSIX device "woofles": the return code of each of the six
 * functions in every state, that Open from two threads serialises, and (built with
 * -DTVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=50) that Open times out on a held device.
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

static void *worker(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 200; i++) {
        EXPECT(TVMDeviceWooflesActivate(&shared), TVM_DEVICE_OK);
        EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK);
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
static void *holder(void *arg)
{
    (void)arg;
    EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_OK);
    pause_us(300000);
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
    /* Another thread holds the device longer than the timeout. */
    EXPECT(TVMDeviceWooflesActivate(&shared), TVM_DEVICE_OK);
    pthread_create(&a, NULL, holder, NULL);
    pause_us(100000);
    EXPECT(TVMDeviceWooflesOpen(&shared), TVM_DEVICE_ERR_TIMEOUT);
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
