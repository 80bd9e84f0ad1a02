/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Startup for tvmdev's bare-metal Cortex-M boards: the vector table, the reset handler
 * (copy .data, zero .bss, and the same for the sections of the other memory regions the
 * linker script lists in its copy and zero tables; enable the FPU and MVE where the board
 * has them, run main)
 * and fault handlers that report over semihosting. main's return value becomes the
 * semihosting exit status, so QEMU exits with it.
 */
#include <stdint.h>

#include "semihosting.h"
#ifdef TVMDEV_IRQ_TABLE
#include "nvic.h"
#endif

/* Exit statuses of the firmware itself (the model's run returns small negative codes,
 * mapped by main to 0..); these stand apart. */
#define TVMDEV_EXIT_FAULT 0xFA

extern uint32_t __data_load__, __data_start__, __data_end__;
extern uint32_t __bss_start__, __bss_end__;
extern uint32_t __stack_top__;
/* The linker script's tables of the other regions' sections: (load, start, end) words to
 * copy, (start, end) words to zero. Weak: a linker script without them has none. */
extern const uint32_t __copy_table_start__[] __attribute__((weak));
extern const uint32_t __copy_table_end__[] __attribute__((weak));
extern const uint32_t __zero_table_start__[] __attribute__((weak));
extern const uint32_t __zero_table_end__[] __attribute__((weak));

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);
void Default_Handler(void);

void Reset_Handler(void)
{
    uint32_t *src = &__data_load__;
    uint32_t *dst;

    for (dst = &__data_start__; dst < &__data_end__;) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start__; dst < &__bss_end__;) {
        *dst++ = 0U;
    }
    for (const uint32_t *row = __copy_table_start__; row < __copy_table_end__; row += 3) {
        src = (uint32_t *)row[0];
        for (dst = (uint32_t *)row[1]; dst < (uint32_t *)row[2];) {
            *dst++ = *src++;
        }
    }
    for (const uint32_t *row = __zero_table_start__; row < __zero_table_end__; row += 2) {
        for (dst = (uint32_t *)row[0]; dst < (uint32_t *)row[1];) {
            *dst++ = 0U;
        }
    }
#ifdef TVMDEV_ENABLE_FPU
    /* CPACR: full access to CP10 and CP11, which covers the FPU and MVE (Helium). */
    *(volatile uint32_t *)0xE000ED88U |= (0xFU << 20);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    tvmdev_semihosting_exit(main());
}

void Fault_Handler(void)
{
    tvmdev_semihosting_write0("tvmdev: fault\n");
    tvmdev_semihosting_exit(TVMDEV_EXIT_FAULT);
}

void Default_Handler(void)
{
    tvmdev_semihosting_write0("tvmdev: unexpected interrupt\n");
    tvmdev_semihosting_exit(TVMDEV_EXIT_FAULT);
}

typedef void (*vector_t)(void);

#ifdef TVMDEV_IRQ_TABLE
/* Device interrupts: every external vector enters one dispatcher, which calls the handler
 * a driver attached (nvic.h). A table in RAM keeps the vector table const and lets a
 * driver choose its interrupt lines from board data at run time. */
static volatile tvmdev_irq_handler_t irq_handlers[TVMDEV_IRQ_LINES];

void tvmdev_irq_attach(uint32_t irqn, tvmdev_irq_handler_t handler)
{
    volatile uint32_t *iser = (volatile uint32_t *)0xE000E100U;

    if (irqn >= TVMDEV_IRQ_LINES) {
        return;
    }
    irq_handlers[irqn] = handler;
    __asm__ volatile("dsb" ::: "memory");
    iser[irqn / 32U] = 1U << (irqn % 32U);
}

void tvmdev_irq_detach(uint32_t irqn)
{
    volatile uint32_t *icer = (volatile uint32_t *)0xE000E180U;

    if (irqn >= TVMDEV_IRQ_LINES) {
        return;
    }
    icer[irqn / 32U] = 1U << (irqn % 32U);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    irq_handlers[irqn] = 0;
}

void tvmdev_irq_pend(uint32_t irqn)
{
    volatile uint32_t *ispr = (volatile uint32_t *)0xE000E200U;

    if (irqn < TVMDEV_IRQ_LINES) {
        ispr[irqn / 32U] = 1U << (irqn % 32U);
    }
}

static void irq_dispatch(void)
{
    uint32_t ipsr;
    tvmdev_irq_handler_t handler;

    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    handler = ipsr >= 16U ? irq_handlers[(ipsr - 16U) % TVMDEV_IRQ_LINES] : 0;
    if (handler == 0) {
        Default_Handler();
    } else {
        handler();
    }
}
#define IRQ4(f) f, f, f, f
#define IRQ16(f) IRQ4(f), IRQ4(f), IRQ4(f), IRQ4(f)
#endif

/* An RTOS kernel linked in gives these (RTX5: irq_armv7m.S; FreeRTOS: the port through
 * CMSIS-FreeRTOS's handlers.c), and a test may give NMI_Handler; else the defaults. */
void NMI_Handler(void) __attribute__((weak, alias("Fault_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));
#ifdef TVMDEV_ICOUNT
void tvmdev_icount_systick_handler(void); /* icount.c, built in with TVMDEV_ICOUNT */
#endif

/* The initial stack pointer, then the system handlers. Without TVMDEV_IRQ_TABLE the
 * firmware enables no interrupt, so the table stops there. */
#ifdef TVMDEV_IRQ_TABLE
#define VECTORS (16 + TVMDEV_IRQ_LINES)
#else
#define VECTORS 16
#endif
__attribute__((section(".vectors"), used)) static const vector_t vectors[VECTORS] = {
    (vector_t)(uintptr_t)&__stack_top__,
    Reset_Handler,
    NMI_Handler,
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    Fault_Handler, /* SecureFault (Armv8-M) */
    0, 0, 0,
    SVC_Handler,
    Default_Handler, /* DebugMonitor */
    0,
    PendSV_Handler,
#ifndef TVMDEV_ICOUNT
    SysTick_Handler,
#else
    tvmdev_icount_systick_handler, /* SysTick: counts the wraps of icount.c's counter */
#endif
#ifdef TVMDEV_IRQ_TABLE
    IRQ16(irq_dispatch), IRQ16(irq_dispatch), IRQ16(irq_dispatch), IRQ16(irq_dispatch),
#endif
};
