/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's simulated accelerator runtime (see tvmdev_sim.h).
 */
#include "tvmdev_sim.h"

#include <stddef.h>

#ifdef TVMDEV_SIM_PTHREAD
#include <pthread.h>
static pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
#define SIM_LOCK() (void)pthread_mutex_lock(&sim_lock)
#define SIM_UNLOCK() (void)pthread_mutex_unlock(&sim_lock)
#elif defined(TVMDEV_SIM_CMSIS_RTOS2)
/* Firmware on a CMSIS-RTOS2 kernel: the scheduler is held while counting. */
#include "cmsis_os2.h"
#define SIM_LOCK() int32_t sim_locked_ = osKernelLock()
#define SIM_UNLOCK() (void)osKernelRestoreLock(sim_locked_)
#elif defined(TVMDEV_SIM_ZEPHYR)
/* Zephyr: interrupts (and so the scheduler) are held while counting. */
#include <zephyr/kernel.h>
#define SIM_LOCK() unsigned int sim_key_ = irq_lock()
#define SIM_UNLOCK() irq_unlock(sim_key_)
#else
#define SIM_LOCK() ((void)0)
#define SIM_UNLOCK() ((void)0)
#endif

uint32_t tvmdev_sim_thread_calls[TVMDEV_SIM_MAX_THREADS][TVMDEV_SIM_FN_COUNT];
uint32_t tvmdev_sim_thread_violations[TVMDEV_SIM_MAX_THREADS];
static int (*thread_index)(void);

void tvmdev_sim_set_thread_index(int (*fn)(void)) { thread_index = fn; }

/* The calling thread's counters' row, or -1 (no hook, or a thread it does not know). */
static int thread_slot(void)
{
    int slot = thread_index != NULL ? thread_index() : -1;

    return slot >= 0 && slot < TVMDEV_SIM_MAX_THREADS ? slot : -1;
}

const char *const tvmdev_sim_fn_names[TVMDEV_SIM_FN_COUNT] = {
    "activate", "open", "operator", "close", "deactivate", "copy_to", "copy_from", "wait",
};

static struct {
    const void *dev;
    struct tvmdev_sim_instance *inst;
} attached[TVMDEV_SIM_MAX_INSTANCES];
static uint32_t global_calls[TVMDEV_SIM_FN_COUNT];
static int fail_fn = -1;
static uint32_t fail_nth;
static int32_t fail_code;

int32_t tvmdev_sim_attach(const void *tvm_dev, struct tvmdev_sim_instance *inst)
{
    int32_t status = TVM_DEVICE_ERR_INVALID;
    int i;

    SIM_LOCK();
    for (i = 0; i < TVMDEV_SIM_MAX_INSTANCES; i++) {
        if (attached[i].dev == NULL || attached[i].dev == tvm_dev) {
            attached[i].dev = tvm_dev;
            attached[i].inst = inst;
            inst->dev = tvm_dev;
            status = TVM_DEVICE_OK;
            break;
        }
    }
    SIM_UNLOCK();
    return status;
}

struct tvmdev_sim_instance *tvmdev_sim_of(const void *tvm_dev)
{
    struct tvmdev_sim_instance *inst = NULL;
    int i;

    SIM_LOCK();
    for (i = 0; i < TVMDEV_SIM_MAX_INSTANCES && attached[i].dev != NULL; i++) {
        if (attached[i].dev == tvm_dev) {
            inst = attached[i].inst;
            break;
        }
    }
    SIM_UNLOCK();
    return inst;
}

void tvmdev_sim_fail_at(enum tvmdev_sim_fn fn, uint32_t nth, int32_t code)
{
    SIM_LOCK();
    fail_fn = (int)fn;
    fail_nth = nth;
    fail_code = code;
    SIM_UNLOCK();
}

static int parse_int(const char **s, long *out)
{
    long sign = 1, value = 0;
    int digits = 0;

    if (**s == '-') {
        sign = -1;
        (*s)++;
    }
    while (**s >= '0' && **s <= '9') {
        value = value * 10 + (**s - '0');
        (*s)++;
        digits++;
    }
    *out = sign * value;
    return digits > 0 ? 0 : -1;
}

int tvmdev_sim_parse_fault(const char *spec)
{
    int fn;
    long nth, code;

    for (fn = 0; fn < TVMDEV_SIM_FN_COUNT; fn++) {
        const char *name = tvmdev_sim_fn_names[fn];
        const char *s = spec;

        while (*name != '\0' && *s == *name) {
            name++;
            s++;
        }
        if (*name == '\0' && *s == ':') {
            s++;
            if (parse_int(&s, &nth) != 0 || *s != ':' || nth < 1) {
                return -1;
            }
            s++;
            if (parse_int(&s, &code) != 0 || *s != '\0') {
                return -1;
            }
            tvmdev_sim_fail_at((enum tvmdev_sim_fn)fn, (uint32_t)nth, (int32_t)code);
            return 0;
        }
    }
    return -1;
}

/* A restart: the memory holds garbage, nothing is pending. */
static void lose_memory(struct tvmdev_sim_instance *inst)
{
    uint32_t i;

    for (i = 0; i < inst->memory_size; i++) {
        inst->memory[i] = 0xa5;
    }
    inst->pending_now = 0;
    inst->pending_bytes = 0;
    inst->lost++;
}

void tvmdev_sim_set_ready(struct tvmdev_sim_instance *inst, int (*ready)(const void *tvm_dev))
{
    inst->ready = ready;
}

int32_t tvmdev_sim_enter(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn)
{
    int32_t status = TVM_DEVICE_OK;
    /* The platform's own view (its device powered and held by this thread), asked before
     * the lock: it may take the kernel's. */
    int unready = inst != NULL && fn == TVMDEV_SIM_OPERATOR && inst->ready != NULL
                  && !inst->ready(inst->dev);

    SIM_LOCK();
    global_calls[fn]++;
    if ((int)fn == fail_fn && global_calls[fn] == fail_nth) {
        status = fail_code;
        if (inst != NULL && inst->memory != NULL) {
            lose_memory(inst); /* a failing device restarts: its memory is gone */
        }
    } else if (inst == NULL) {
        status = TVM_DEVICE_ERR_INVALID;
    } else if (fn == TVMDEV_SIM_OPERATOR || fn == TVMDEV_SIM_COPY_TO
               || fn == TVMDEV_SIM_COPY_FROM || fn == TVMDEV_SIM_WAIT) {
        if (fn != TVMDEV_SIM_WAIT && inst->pending_now > 0) {
            inst->violations++; /* a second call before the Wait that ends the first */
        }
        if (inst->open_now <= 0 || inst->active_now <= 0 || unready) {
            inst->violations++; /* an operator ran on a device not open, or not active */
            if (thread_slot() >= 0) {
                tvmdev_sim_thread_violations[thread_slot()]++;
            }
            status = TVM_DEVICE_ERR_NOT_READY;
        } else if (fn == TVMDEV_SIM_OPERATOR) {
            inst->inside++;
            if (inst->inside > inst->max_inside) {
                inst->max_inside = inst->inside;
            }
        }
    }
    SIM_UNLOCK();
    return status;
}

void tvmdev_sim_leave(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn, int32_t status)
{
    if (inst == NULL) {
        return;
    }
    SIM_LOCK();
    if (fn == TVMDEV_SIM_OPERATOR) {
        inst->inside--;
    }
    if (status == TVM_DEVICE_OK) {
        inst->calls[fn]++;
        if (thread_slot() >= 0) {
            tvmdev_sim_thread_calls[thread_slot()][fn]++;
        }
        switch (fn) {
        case TVMDEV_SIM_ACTIVATE:
            inst->active_now++;
            break;
        case TVMDEV_SIM_DEACTIVATE:
            if (inst->active_now <= 0) {
                inst->violations++;
            }
            inst->active_now--;
            break;
        case TVMDEV_SIM_OPEN:
            inst->open_now++;
            if (inst->open_now > 1) {
                inst->violations++; /* two holders at once */
            }
            break;
        case TVMDEV_SIM_CLOSE:
            if (inst->open_now <= 0) {
                inst->violations++;
            }
            inst->open_now--;
            break;
        default:
            break;
        }
    }
    SIM_UNLOCK();
}

#ifndef TVMDEV_SIM_ASYNC
#define TVMDEV_SIM_ASYNC 0
#endif

void tvmdev_sim_attach_memory(struct tvmdev_sim_instance *inst, uint8_t *memory, uint32_t size)
{
    inst->memory = memory;
    inst->memory_size = size;
}

uint8_t *tvmdev_sim_at(struct tvmdev_sim_instance *inst, uint32_t addr, uint32_t nbytes)
{
    if (inst == NULL || inst->memory == NULL || addr > inst->memory_size
        || nbytes > inst->memory_size - addr) {
        if (inst != NULL) {
            SIM_LOCK();
            inst->violations++;
            SIM_UNLOCK();
        }
        return NULL;
    }
    return inst->memory + addr;
}

static void copy_bytes(void *dst, const void *src, uint32_t nbytes)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    uint32_t i;

    for (i = 0; i < nbytes; i++) {
        d[i] = s[i];
    }
}

/* One copy: now, or (asynchronous) at the next Wait. */
static int32_t start_copy(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn, void *dst,
                          const void *src, uint32_t nbytes)
{
    int32_t status = TVM_DEVICE_OK;

    if (TVMDEV_SIM_ASYNC) {
        inst->pending_dst = dst;
        inst->pending_src = src;
        inst->pending_bytes = nbytes;
        status = TVM_DEVICE_PENDING;
    } else {
        copy_bytes(dst, src, nbytes);
    }
    SIM_LOCK();
    if (fn == TVMDEV_SIM_COPY_TO) {
        inst->bytes_to += nbytes;
    } else {
        inst->bytes_from += nbytes;
    }
    if (status == TVM_DEVICE_PENDING) {
        inst->pending_now++;
    }
    SIM_UNLOCK();
    tvmdev_sim_leave(inst, fn, TVM_DEVICE_OK);
    return status;
}

int32_t tvmdev_sim_copy_to(const void *tvm_dev, uint32_t dst, const void *src, uint32_t nbytes)
{
    struct tvmdev_sim_instance *inst = tvmdev_sim_of(tvm_dev);
    int32_t status = tvmdev_sim_enter(inst, TVMDEV_SIM_COPY_TO);
    uint8_t *to;

    if (status != TVM_DEVICE_OK) {
        return status;
    }
    to = tvmdev_sim_at(inst, dst, nbytes);
    if (to == NULL || src == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    return start_copy(inst, TVMDEV_SIM_COPY_TO, to, src, nbytes);
}

int32_t tvmdev_sim_copy_from(const void *tvm_dev, void *dst, uint32_t src, uint32_t nbytes)
{
    struct tvmdev_sim_instance *inst = tvmdev_sim_of(tvm_dev);
    int32_t status = tvmdev_sim_enter(inst, TVMDEV_SIM_COPY_FROM);
    uint8_t *from;

    if (status != TVM_DEVICE_OK) {
        return status;
    }
    from = tvmdev_sim_at(inst, src, nbytes);
    if (from == NULL || dst == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    return start_copy(inst, TVMDEV_SIM_COPY_FROM, dst, from, nbytes);
}

int32_t tvmdev_sim_wait(const void *tvm_dev, uint32_t timeout_ms)
{
    struct tvmdev_sim_instance *inst = tvmdev_sim_of(tvm_dev);
    int32_t status = tvmdev_sim_enter(inst, TVMDEV_SIM_WAIT);

    (void)timeout_ms;
    if (status != TVM_DEVICE_OK) {
        return status;
    }
    if (inst->pending_bytes > 0) {
        copy_bytes(inst->pending_dst, inst->pending_src, inst->pending_bytes);
        inst->pending_bytes = 0;
    }
    SIM_LOCK();
    inst->pending_now = 0;
    SIM_UNLOCK();
    tvmdev_sim_leave(inst, TVMDEV_SIM_WAIT, TVM_DEVICE_OK);
    return TVM_DEVICE_OK;
}

int32_t tvmdev_sim_job_done(struct tvmdev_sim_instance *inst, int32_t status)
{
    tvmdev_sim_leave(inst, TVMDEV_SIM_OPERATOR, status);
    if (status != TVM_DEVICE_OK || !TVMDEV_SIM_ASYNC || inst == NULL) {
        return status;
    }
    SIM_LOCK();
    inst->pending_now++;
    SIM_UNLOCK();
    return TVM_DEVICE_PENDING;
}
