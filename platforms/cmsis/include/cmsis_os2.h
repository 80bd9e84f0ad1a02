/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal declarations of the CMSIS-RTOS2 API (kernel state and tick, delay,
 * thread and mutex subset), written for tvmdev from the published API reference.
 * Not the Arm headers; link against the real ones in production.
 *
 * The include guard name matches the one used by the real header, so that
 * whichever copy is included first wins and the other is skipped.
 */
#ifndef CMSIS_OS2_H_
#define CMSIS_OS2_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Timeout value meaning "block until the operation completes". */
#define osWaitForever 0xFFFFFFFFU

typedef enum {
    osOK             = 0,
    osError          = -1,
    osErrorTimeout   = -2,
    osErrorResource  = -3,
    osErrorParameter = -4,
    osErrorNoMemory  = -5,
    osErrorISR       = -6,
    osStatusReserved = 0x7FFFFFFF /* forces a 32-bit enum */
} osStatus_t;

typedef enum {
    osKernelInactive  = 0,
    osKernelReady     = 1,
    osKernelRunning   = 2,
    osKernelLocked    = 3,
    osKernelSuspended = 4,
    osKernelError     = -1,
    osKernelReserved  = 0x7FFFFFFF /* forces a 32-bit enum */
} osKernelState_t;

/* Subset of the priority levels (each level N also has N+1 .. N+7). */
typedef enum {
    osPriorityNone        = 0,
    osPriorityIdle        = 1,
    osPriorityLow         = 8,
    osPriorityBelowNormal = 16,
    osPriorityNormal      = 24,
    osPriorityAboveNormal = 32,
    osPriorityHigh        = 40,
    osPriorityRealtime    = 48,
    osPriorityISR         = 56,
    osPriorityError       = -1,
    osPriorityReserved    = 0x7FFFFFFF /* forces a 32-bit enum */
} osPriority_t;

/* Opaque object handles. */
typedef void *osThreadId_t;
typedef void *osMutexId_t;
typedef void *osSemaphoreId_t;

typedef void (*osThreadFunc_t)(void *argument);

/* Shared with the TrustZone context header, hence the guard. */
#ifndef TZ_MODULEID_T
#define TZ_MODULEID_T
typedef uint32_t TZ_ModuleId_t;
#endif

/* Thread attr_bits */
#define osThreadDetached 0x00000000U
#define osThreadJoinable 0x00000001U

typedef struct {
    const char   *name;
    uint32_t      attr_bits;
    void         *cb_mem;
    uint32_t      cb_size;
    void         *stack_mem;
    uint32_t      stack_size;
    osPriority_t  priority;
    TZ_ModuleId_t tz_module;
    uint32_t      reserved; /* must be 0 (later API versions: affinity_mask) */
} osThreadAttr_t;

/* Mutex attr_bits */
#define osMutexRecursive   0x00000001U
#define osMutexPrioInherit 0x00000002U
#define osMutexRobust      0x00000008U

typedef struct {
    const char *name;
    uint32_t    attr_bits;
    void       *cb_mem;
    uint32_t    cb_size;
} osMutexAttr_t;

/* Kernel */
osKernelState_t osKernelGetState(void);
int32_t osKernelLock(void);
int32_t osKernelRestoreLock(int32_t lock);
uint32_t osKernelGetTickCount(void);
uint32_t osKernelGetTickFreq(void);

/* Threads */
osThreadId_t osThreadNew(osThreadFunc_t func, void *argument, const osThreadAttr_t *attr);
osThreadId_t osThreadGetId(void);
osStatus_t osDelay(uint32_t ticks);

/* Mutexes */
osMutexId_t osMutexNew(const osMutexAttr_t *attr);
osStatus_t osMutexAcquire(osMutexId_t mutex_id, uint32_t timeout);
osStatus_t osMutexRelease(osMutexId_t mutex_id);
osStatus_t osMutexDelete(osMutexId_t mutex_id);
osThreadId_t osMutexGetOwner(osMutexId_t mutex_id);

/* Semaphores: attributes as for mutexes (name, attr_bits, cb_mem, cb_size). */
typedef struct {
    const char *name;
    uint32_t attr_bits;
    void *cb_mem;
    uint32_t cb_size;
} osSemaphoreAttr_t;

osSemaphoreId_t osSemaphoreNew(uint32_t max_count, uint32_t initial_count,
                               const osSemaphoreAttr_t *attr);
osStatus_t osSemaphoreAcquire(osSemaphoreId_t semaphore_id, uint32_t timeout);
osStatus_t osSemaphoreRelease(osSemaphoreId_t semaphore_id);
osStatus_t osSemaphoreDelete(osSemaphoreId_t semaphore_id);

#ifdef __cplusplus
}
#endif

#endif /* CMSIS_OS2_H_ */
