/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's simulated accelerator runtime: counts the device calls of every instance,
 * checks the protocol (operators only while open, Close after Open, Deactivate after
 * Activate) and injects a failure at the Nth call of one device function.
 *
 * A device kind with memory of its own (docs/device-memory.md) gets a separate memory per
 * instance, attached by tvmdev_sim_attach_memory: CopyTo, CopyFrom and Wait move bytes
 * in and out of it and count them, and its kernels find their tensors there. Built with
 * -DTVMDEV_SIM_ASYNC=1, every copy and kernel returns TVM_DEVICE_PENDING and a copy only
 * moves its bytes at the next Wait (as DMA would), so an executor that reads too early
 * reads stale bytes.
 *
 * Build with -DTVMDEV_SIM_PTHREAD on hosts where several threads share an instance,
 * -DTVMDEV_SIM_CMSIS_RTOS2 on a CMSIS-RTOS2 kernel, -DTVMDEV_SIM_ZEPHYR on Zephyr.
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
    TVMDEV_SIM_COPY_TO,
    TVMDEV_SIM_COPY_FROM,
    TVMDEV_SIM_WAIT,
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
    /* A device with memory: its memory (not the CPU's workspace), attached by the harness. */
    uint8_t *memory;
    uint32_t memory_size;
    uint32_t bytes_to;   /* copied into its memory */
    uint32_t bytes_from; /* copied out of it */
    int32_t pending_now; /* calls that returned TVM_DEVICE_PENDING and no Wait ended */
    int32_t lost;        /* times it lost its memory (a failure injected into it) */
    /* The copy an asynchronous device moves at the next Wait. */
    void *pending_dst;
    const void *pending_src;
    uint32_t pending_bytes;
    /* The device instance it is attached to, and the platform's check that an operator
     * may run on it now (set by tvmdev_sim_set_ready; NULL: the counts above alone). */
    const void *dev;
    int (*ready)(const void *tvm_dev);
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

/* Give the instance inst a memory of size bytes (before its device's Init). */
void tvmdev_sim_attach_memory(struct tvmdev_sim_instance *inst, uint8_t *memory, uint32_t size);

/*
 * A platform whose device has a state of its own sets ready (after the attach): an
 * operator counts as a violation also when ready(tvm_dev) is 0. Zephyr's simulated device
 * says whether the calling thread holds it and runtime PM has it resumed.
 */
void tvmdev_sim_set_ready(struct tvmdev_sim_instance *inst, int (*ready)(const void *tvm_dev));

/* The device memory of inst at addr, or NULL when [addr, addr + nbytes) is not inside it
 * (a protocol violation). */
uint8_t *tvmdev_sim_at(struct tvmdev_sim_instance *inst, uint32_t addr, uint32_t nbytes);

/* CopyTo, CopyFrom and Wait of a simulated device with memory, and the end of its kernels:
 * TVM_DEVICE_OK, TVM_DEVICE_PENDING (asynchronous), an injected failure or an error. */
int32_t tvmdev_sim_copy_to(const void *tvm_dev, uint32_t dst, const void *src, uint32_t nbytes);
int32_t tvmdev_sim_copy_from(const void *tvm_dev, void *dst, uint32_t src, uint32_t nbytes);
int32_t tvmdev_sim_wait(const void *tvm_dev, uint32_t timeout_ms);
int32_t tvmdev_sim_job_done(struct tvmdev_sim_instance *inst, int32_t status);

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

/* Names for reports: "activate", "open", "operator", "close", "deactivate", "copy_to",
 * "copy_from", "wait". */
extern const char *const tvmdev_sim_fn_names[TVMDEV_SIM_FN_COUNT];

#ifdef __cplusplus
}
#endif

#endif /* TVMDEV_SIM_H_ */
