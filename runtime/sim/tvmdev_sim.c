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
    "activate", "open", "operator", "close", "deactivate",
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

int32_t tvmdev_sim_enter(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn)
{
    int32_t status = TVM_DEVICE_OK;

    SIM_LOCK();
    global_calls[fn]++;
    if ((int)fn == fail_fn && global_calls[fn] == fail_nth) {
        status = fail_code;
    } else if (inst == NULL) {
        status = TVM_DEVICE_ERR_INVALID;
    } else if (fn == TVMDEV_SIM_OPERATOR) {
        if (inst->open_now <= 0 || inst->active_now <= 0) {
            inst->violations++; /* an operator ran on a device not open, or not active */
            if (thread_slot() >= 0) {
                tvmdev_sim_thread_violations[thread_slot()]++;
            }
            status = TVM_DEVICE_ERR_NOT_READY;
        } else {
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
