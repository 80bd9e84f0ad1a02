/*
 * A fake CMSIS-RTOS2 kernel on POSIX threads, for the generated CMSIS device code. Each
 * thread of the test is a kernel thread; one tick is one millisecond. Built as one of
 * the two real kernels (-DFAKE_RTX5 or -DFAKE_FREERTOS) where they differ, each such
 * place naming the source it copies:
 *   RTX5:     ARM-software/CMSIS-RTX v5.9.1, Source/rtx_mutex.c, Source/rtx_delay.c
 *   FreeRTOS: ARM-software/CMSIS-FreeRTOS v11.3.0, CMSIS/RTOS2/FreeRTOS/Source/cmsis_os2.c
 *             (and FreeRTOS-Kernel V11.3.0 queue.c / tasks.c beneath it)
 * A test makes a thread an "interrupt" with fake_rtos_set_isr(1): every call then behaves
 * as the kernels do in handler mode. Leaks show in fake_rtos_live_mutexes(): the pool is
 * FAKE_MUTEXES objects, as a kernel's object pool is finite.
 */
#define _POSIX_C_SOURCE 200809L
#include "fake_cmsis_rtos2.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(FAKE_RTX5) == defined(FAKE_FREERTOS)
#error "build with -DFAKE_RTX5 or -DFAKE_FREERTOS"
#endif

#define FAKE_MUTEXES 8

struct fake_mutex {
    int used;
    int is_static;
    osThreadId_t owner;
    pthread_cond_t freed;
};

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER; /* the kernel's */
static struct fake_mutex pool[FAKE_MUTEXES];
static osKernelState_t state = osKernelInactive;
static _Thread_local int thread_is_isr;
static _Thread_local char thread_self; /* its address is the thread's id */
static int non_owner_releases, static_mutexes;

void fake_rtos_set_state(osKernelState_t s) { state = s; }
void fake_rtos_set_isr(int isr) { thread_is_isr = isr; }
int fake_rtos_non_owner_releases(void) { return non_owner_releases; }
int fake_rtos_static_mutexes(void) { return static_mutexes; }

int fake_rtos_live_mutexes(void)
{
    int n = 0;
    int i;

    for (i = 0; i < FAKE_MUTEXES; i++) {
        n += pool[i].used;
    }
    return n;
}

static void sleep_ms(uint32_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000U), (long)(ms % 1000U) * 1000000L};

    nanosleep(&ts, NULL);
}

/*
 * The scheduler lock. Both kernels: in an interrupt osErrorISR; locked already: 1; running:
 * lock, 0; otherwise osError (RTX5 rtx_kernel.c svcRtxKernelLock/RestoreLock; CMSIS-FreeRTOS
 * cmsis_os2.c osKernelLock/RestoreLock over vTaskSuspendAll/xTaskResumeAll). While a
 * thread holds it no other thread runs, so here the others wait at their next lock, and
 * only the holder sees the kernel locked.
 */
static pthread_mutex_t scheduler = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int holds_scheduler;

osKernelState_t osKernelGetState(void)
{
    return holds_scheduler ? osKernelLocked : state;
}

int32_t osKernelLock(void)
{
    if (thread_is_isr) {
        return osErrorISR;
    }
    if (holds_scheduler) {
        return 1;
    }
    if (state != osKernelRunning) {
        return osError;
    }
    pthread_mutex_lock(&scheduler);
    holds_scheduler = 1;
    return 0;
}

int32_t osKernelRestoreLock(int32_t lock)
{
    if (thread_is_isr) {
        return osErrorISR;
    }
    if ((lock != 0 && lock != 1) || (state != osKernelRunning && !holds_scheduler)) {
        return osError;
    }
    if (lock == 1 && !holds_scheduler) {
        pthread_mutex_lock(&scheduler);
        holds_scheduler = 1;
    } else if (lock == 0 && holds_scheduler) {
        holds_scheduler = 0;
        pthread_mutex_unlock(&scheduler);
    }
    return lock;
}

/* Both kernels give the running thread, in an interrupt the one interrupted. */
osThreadId_t osThreadGetId(void) { return &thread_self; }

osStatus_t osDelay(uint32_t ticks)
{
    if (thread_is_isr) {
        return osErrorISR; /* both: osDelay checks IsException()/IRQ_Context() first */
    }
    if (ticks == 0U) {
#ifdef FAKE_RTX5
        return osErrorParameter; /* rtx_delay.c, svcRtxDelay: ticks == 0 */
#else
        return osOK; /* cmsis_os2.c, osDelay: vTaskDelay only when ticks != 0 */
#endif
    }
    sleep_ms(ticks);
    return osOK;
}

osMutexId_t osMutexNew(const osMutexAttr_t *attr)
{
    osMutexId_t id = NULL;
    int i;

    if (thread_is_isr) {
        return NULL; /* both: osMutexNew returns NULL from an interrupt */
    }
#ifdef FAKE_RTX5
    /* rtx_mutex.c, svcRtxMutexNew: objects come from the memory osKernelInitialize sets up */
    if (state == osKernelInactive) {
        return NULL;
    }
#endif
    if (attr != NULL && attr->cb_mem != NULL) {
#ifdef FAKE_RTX5
        /* rtx_mutex.c, svcRtxMutexNew: cb_size != sizeof(os_mutex_t) is refused */
        if (attr->cb_size != sizeof(fake_mutex_cb_t)) {
            return NULL;
        }
#else
        /* cmsis_os2.c, osMutexNew: static only if cb_size >= sizeof(StaticSemaphore_t) */
        if (attr->cb_size < sizeof(fake_mutex_cb_t)) {
            return NULL;
        }
#endif
    } else if (attr != NULL && attr->cb_size != 0U) {
        return NULL; /* both: a size without memory is refused */
    }
    pthread_mutex_lock(&big_lock);
    for (i = 0; i < FAKE_MUTEXES && id == NULL; i++) {
        if (!pool[i].used) {
            pool[i].used = 1;
            pool[i].owner = NULL;
            pool[i].is_static = attr != NULL && attr->cb_mem != NULL;
            static_mutexes += pool[i].is_static;
            pthread_cond_init(&pool[i].freed, NULL);
            id = &pool[i];
        }
    }
    pthread_mutex_unlock(&big_lock);
    return id;
}

osStatus_t osMutexAcquire(osMutexId_t mutex_id, uint32_t timeout)
{
    struct fake_mutex *m = mutex_id;
    struct timespec deadline;
    osStatus_t status = osOK;

    if (thread_is_isr) {
        return osErrorISR; /* both */
    }
    if (m == NULL || !m->used) {
        return osErrorParameter;
    }
#ifdef FAKE_RTX5
    /* rtx_mutex.c, svcRtxMutexAcquire: no running thread before osKernelStart */
    if (state != osKernelRunning && state != osKernelLocked) {
        return osError;
    }
#endif
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)(timeout / 1000U);
    deadline.tv_nsec += (long)(timeout % 1000U) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&big_lock);
    if (m->owner == osThreadGetId() && timeout == osWaitForever) {
        /* Both kernels: a non-recursive mutex's holder waiting on it waits forever. */
        fprintf(stderr, "fake kernel: a thread waits forever for a mutex it holds\n");
        abort();
    }
    while (m->owner != NULL && status == osOK) {
        if (timeout == 0U) {
            status = osErrorResource;
        } else if (timeout == osWaitForever) {
            pthread_cond_wait(&m->freed, &big_lock);
        } else if (pthread_cond_timedwait(&m->freed, &big_lock, &deadline) == ETIMEDOUT) {
            status = m->owner != NULL ? osErrorTimeout : osOK;
        }
    }
    if (status == osOK) {
        m->owner = osThreadGetId();
    }
    pthread_mutex_unlock(&big_lock);
    return status;
}

osStatus_t osMutexRelease(osMutexId_t mutex_id)
{
    struct fake_mutex *m = mutex_id;
    osStatus_t status = osOK;

    if (thread_is_isr) {
        return osErrorISR; /* both */
    }
    if (m == NULL || !m->used) {
        return osErrorParameter;
    }
    pthread_mutex_lock(&big_lock);
    if (m->owner == NULL) {
        status = osErrorResource; /* both: not locked (FreeRTOS: the give finds it full) */
    } else if (m->owner != osThreadGetId()) {
#ifdef FAKE_RTX5
        status = osErrorResource; /* rtx_mutex.c, svcRtxMutexRelease: not the owner */
#else
        /* cmsis_os2.c, osMutexRelease: xSemaphoreGive without an owner check; with
         * configASSERT off (tasks.c, xTaskPriorityDisinherit) the mutex is released. */
        non_owner_releases++;
        m->owner = NULL;
        pthread_cond_signal(&m->freed);
#endif
    } else {
        m->owner = NULL;
        pthread_cond_signal(&m->freed);
    }
    pthread_mutex_unlock(&big_lock);
    return status;
}

osThreadId_t osMutexGetOwner(osMutexId_t mutex_id)
{
    struct fake_mutex *m = mutex_id;
    osThreadId_t owner;

    /* rtx_mutex.c and cmsis_os2.c, osMutexGetOwner: NULL from an interrupt */
    if (thread_is_isr || m == NULL || !m->used) {
        return NULL;
    }
    pthread_mutex_lock(&big_lock);
    owner = m->owner;
    pthread_mutex_unlock(&big_lock);
    return owner;
}

osStatus_t osMutexDelete(osMutexId_t mutex_id)
{
    struct fake_mutex *m = mutex_id;

    if (thread_is_isr) {
        return osErrorISR; /* both */
    }
    if (m == NULL || !m->used) {
        return osErrorParameter;
    }
    pthread_mutex_lock(&big_lock);
    m->used = 0;
    m->owner = NULL;
    pthread_cond_destroy(&m->freed);
    pthread_mutex_unlock(&big_lock);
    return osOK;
}

/*
 * Counting semaphores: where both kernels agree (RTX5 rtx_semaphore.c,
 * svcRtxSemaphoreAcquire/isrRtxSemaphoreAcquire/svcRtxSemaphoreRelease; CMSIS-FreeRTOS
 * cmsis_os2.c, osSemaphoreAcquire/osSemaphoreRelease): no token and no wait is
 * osErrorResource, a wait that ends without one osErrorTimeout, a wait from an
 * interrupt osErrorParameter, a release of a full semaphore osErrorResource. The pool is
 * FAKE_MUTEXES objects.
 */
struct fake_semaphore {
    int used;
    uint32_t count, max;
    pthread_cond_t given;
};

static struct fake_semaphore semaphores[FAKE_MUTEXES];

osSemaphoreId_t osSemaphoreNew(uint32_t max_count, uint32_t initial_count,
                               const osSemaphoreAttr_t *attr)
{
    osSemaphoreId_t id = NULL;
    int i;

    (void)attr;
    if (thread_is_isr || max_count == 0U || initial_count > max_count) {
        return NULL;
    }
    pthread_mutex_lock(&big_lock);
    for (i = 0; i < FAKE_MUTEXES && id == NULL; i++) {
        if (!semaphores[i].used) {
            semaphores[i].used = 1;
            semaphores[i].count = initial_count;
            semaphores[i].max = max_count;
            pthread_cond_init(&semaphores[i].given, NULL);
            id = &semaphores[i];
        }
    }
    pthread_mutex_unlock(&big_lock);
    return id;
}

osStatus_t osSemaphoreAcquire(osSemaphoreId_t semaphore_id, uint32_t timeout)
{
    struct fake_semaphore *s = semaphore_id;
    struct timespec deadline;
    osStatus_t status = osOK;

    if (s == NULL || !s->used || (thread_is_isr && timeout != 0U)) {
        return osErrorParameter;
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)(timeout / 1000U);
    deadline.tv_nsec += (long)(timeout % 1000U) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&big_lock);
    while (s->count == 0U && status == osOK) {
        if (timeout == 0U) {
            status = osErrorResource;
        } else if (timeout == osWaitForever) {
            pthread_cond_wait(&s->given, &big_lock);
        } else if (pthread_cond_timedwait(&s->given, &big_lock, &deadline) == ETIMEDOUT) {
            status = s->count == 0U ? osErrorTimeout : osOK;
        }
    }
    if (status == osOK) {
        s->count--;
    }
    pthread_mutex_unlock(&big_lock);
    return status;
}

osStatus_t osSemaphoreRelease(osSemaphoreId_t semaphore_id)
{
    struct fake_semaphore *s = semaphore_id;
    osStatus_t status = osOK;

    if (s == NULL || !s->used) {
        return osErrorParameter;
    }
    pthread_mutex_lock(&big_lock);
    if (s->count == s->max) {
        status = osErrorResource;
    } else {
        s->count++;
        pthread_cond_signal(&s->given);
    }
    pthread_mutex_unlock(&big_lock);
    return status;
}

osStatus_t osSemaphoreDelete(osSemaphoreId_t semaphore_id)
{
    struct fake_semaphore *s = semaphore_id;

    if (thread_is_isr) {
        return osErrorISR;
    }
    if (s == NULL || !s->used) {
        return osErrorParameter;
    }
    pthread_mutex_lock(&big_lock);
    s->used = 0;
    pthread_cond_destroy(&s->given);
    pthread_mutex_unlock(&big_lock);
    return osOK;
}

int fake_rtos_live_semaphores(void)
{
    int n = 0;
    int i;

    for (i = 0; i < FAKE_MUTEXES; i++) {
        n += semaphores[i].used;
    }
    return n;
}
