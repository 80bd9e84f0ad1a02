/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deterministic instruction counting on tvmdev's Cortex-M boards under QEMU.
 *
 * Run QEMU with `-icount shift=0,align=off,sleep=off`: every guest instruction then
 * advances the virtual clock by exactly 1 ns, whatever the host does. SysTick, clocked by
 * the processor clock (CLKSOURCE=1), is a timer on that virtual clock, so each of its
 * ticks is 1e9 / clock_hz instructions (40 on the 25 MHz MPS2 boards). Its 24-bit wraps
 * are counted by SysTick_Handler (startup.c, built with TVMDEV_ICOUNT), so the count
 * is 64-bit and never overflows in practice (2^64 ticks).
 *
 * benchmarks/_icount.py turns ticks into instructions and says how it was checked
 * against an exact count (Unicorn).
 */
#ifndef TVMDEV_ICOUNT_H_
#define TVMDEV_ICOUNT_H_

#include <stdint.h>

/* Starts (or restarts) counting from zero. Enables SysTick and its interrupt. */
void tvmdev_icount_start(void);

/* SysTick ticks since tvmdev_icount_start. */
uint64_t tvmdev_icount_ticks(void);

/* The SysTick wrap interrupt (the vector table's SysTick entry with TVMDEV_ICOUNT). */
void tvmdev_icount_systick_handler(void);

#endif /* TVMDEV_ICOUNT_H_ */
