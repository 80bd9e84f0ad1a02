/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device interrupts on tvmdev's bare-metal Cortex-M boards (startup.c, built with
 * TVMDEV_IRQ_TABLE): a driver attaches a handler to an external interrupt line (the
 * board's number, from its data: the board file's support.defines) and the line is enabled
 * in the NVIC at its reset priority. The first TVMDEV_IRQ_LINES lines can be attached.
 */
#ifndef TVMDEV_NVIC_H_
#define TVMDEV_NVIC_H_

#include <stdint.h>

#define TVMDEV_IRQ_LINES 64U

typedef void (*tvmdev_irq_handler_t)(void);

/* Route interrupt line irqn to handler and enable it. */
void tvmdev_irq_attach(uint32_t irqn, tvmdev_irq_handler_t handler);
/* Disable line irqn; once this returns its handler is no longer called. */
void tvmdev_irq_detach(uint32_t irqn);
/* Make line irqn pending, as if its device had raised it. */
void tvmdev_irq_pend(uint32_t irqn);

#endif /* TVMDEV_NVIC_H_ */
