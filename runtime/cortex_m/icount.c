/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SysTick as a 64-bit tick counter (see icount.h). Writing CVR clears it to 0; the next
 * tick loads RELOAD, and each tick after counts down; the tick that reaches 0 raises the
 * SysTick exception, whose handler counts the wrap, and the next one reloads. So the
 * counter is 0 at tick 0, RELOAD + 1 - k at tick k of a period, and a period is
 * RELOAD + 1 = 2^24 ticks: ticks = wraps * 2^24 + ((2^24 - value) mod 2^24).
 */
#include "icount.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010U)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014U)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018U)

#define SYST_CSR_ENABLE 0x1U
#define SYST_CSR_TICKINT 0x2U
#define SYST_CSR_CLKSOURCE 0x4U /* the processor clock */
#define RELOAD 0x00FFFFFFU      /* the largest: a wrap every 2^24 ticks */

static volatile uint32_t wraps;

void tvmdev_icount_systick_handler(void)
{
    wraps++;
}

void tvmdev_icount_start(void)
{
    SYST_CSR = 0U;
    SYST_RVR = RELOAD;
    SYST_CVR = 0U; /* any write clears the counter; it reloads on the next tick */
    wraps = 0U;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
}

uint64_t tvmdev_icount_ticks(void)
{
    uint32_t before, value, after;

    /* A wrap between the two reads of wraps is taken (the exception runs) before the
     * second read, so equal reads mean value belongs to that many wraps. */
    do {
        before = wraps;
        value = SYST_CVR;
        after = wraps;
    } while (before != after);
    return (uint64_t)before * ((uint64_t)RELOAD + 1U) + (uint64_t)((RELOAD + 1U - value) & RELOAD);
}
