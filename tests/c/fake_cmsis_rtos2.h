/* The fake CMSIS-RTOS2 kernel of fake_cmsis_rtos2.c: what a test controls and reads. */
#ifndef FAKE_CMSIS_RTOS2_H_
#define FAKE_CMSIS_RTOS2_H_

#include "cmsis_os2.h"

/* A stand-in for the kernel's mutex control block: 28 bytes, as RTX5's osRtxMutex_t on
 * Cortex-M (rtx_os.h), whose size osMutexNew requires exactly. */
typedef struct {
    uint32_t words[7];
} fake_mutex_cb_t;

void fake_rtos_set_state(osKernelState_t state);
void fake_rtos_set_isr(int isr); /* this thread runs as an interrupt handler */
int fake_rtos_live_mutexes(void);
int fake_rtos_live_semaphores(void);
int fake_rtos_static_mutexes(void);
int fake_rtos_non_owner_releases(void); /* releases a non-owner made (FreeRTOS only) */

#endif /* FAKE_CMSIS_RTOS2_H_ */
