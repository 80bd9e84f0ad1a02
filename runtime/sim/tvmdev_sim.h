/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's simulated accelerator runtime: counts the device calls of every instance,
 * checks the protocol (operators only while open, Close after Open, Deactivate after
 * Activate) and injects a failure at the Nth call of one device function.
 *
 * Build with -DTVMDEV_SIM_PTHREAD on hosts where several threads share an instance.
 */
#ifndef TVMDEV_SIM_H_
#define TVMDEV_SIM_H_

#include <stdint.h>

#include "tvm/device/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tvmdev_sim_fn {
    TVMDEV_SIM_ACTIVATE,
    TVMDEV_SIM_OPEN,
    TVMDEV_SIM_OPERATOR,
    TVMDEV_SIM_CLOSE,
    TVMDEV_SIM_DEACTIVATE,
    TVMDEV_SIM_FN_COUNT
};

/* The counters of one simulated device instance. */
struct tvmdev_sim_instance {
    const char *name;
    uint32_t calls[TVMDEV_SIM_FN_COUNT]; /* successful calls */
    int32_t open_now;                    /* Open - Close */
    int32_t active_now;                  /* Activate - Deactivate */
    int32_t inside;                      /* operators running on it now */
    int32_t max_inside;                  /* ... and at most */
    uint32_t violations;                 /* protocol errors seen */
};

/*
 * How many device instances can be attached. tvmdev passes its own limit (the executor's:
 * a model has at most 32 devices), so that the two cannot disagree.
 */
#ifndef TVMDEV_SIM_MAX_INSTANCES
#define TVMDEV_SIM_MAX_INSTANCES 32
#endif

/*
 * Attach the counters inst to the device instance tvm_dev (before its Init). Returns
 * TVM_DEVICE_OK, or TVM_DEVICE_ERR_INVALID when TVMDEV_SIM_MAX_INSTANCES are attached.
 */
int32_t tvmdev_sim_attach(const void *tvm_dev, struct tvmdev_sim_instance *inst);

/* Per thread of a multi-threaded harness: its successful calls and its operators on a
 * device not open or not active, counted when the harness says which thread calls. */
#ifndef TVMDEV_SIM_MAX_THREADS
#define TVMDEV_SIM_MAX_THREADS 4
#endif
extern uint32_t tvmdev_sim_thread_calls[TVMDEV_SIM_MAX_THREADS][TVMDEV_SIM_FN_COUNT];
extern uint32_t tvmdev_sim_thread_violations[TVMDEV_SIM_MAX_THREADS];

/* fn returns the calling thread's row (0 .. TVMDEV_SIM_MAX_THREADS - 1), or -1. */
void tvmdev_sim_set_thread_index(int (*fn)(void));

/* The counters attached to tvm_dev, or NULL. */
struct tvmdev_sim_instance *tvmdev_sim_of(const void *tvm_dev);

/* Make the nth call (1-based, counted over all instances) of fn fail with code. */
void tvmdev_sim_fail_at(enum tvmdev_sim_fn fn, uint32_t nth, int32_t code);

/* Parse "open:3:-5" (function:nth:code); returns 0 on success. */
int tvmdev_sim_parse_fault(const char *spec);

/* Called first by every simulated function: the injected code, or TVM_DEVICE_OK. */
int32_t tvmdev_sim_enter(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn);

/* Called after a simulated function did its work with the given result. */
void tvmdev_sim_leave(struct tvmdev_sim_instance *inst, enum tvmdev_sim_fn fn, int32_t status);

/* Names for reports: "activate", "open", "operator", "close", "deactivate". */
extern const char *const tvmdev_sim_fn_names[TVMDEV_SIM_FN_COUNT];

#ifdef __cplusplus
}
#endif

#endif /* TVMDEV_SIM_H_ */
