/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A CMSIS-Driver USART (Driver_USART0..4) for Arm's CMSDK APB UART, as on the MPS2 and
 * MPS3 boards. Each instance exists when TVMDEV_UART<n>_BASE is defined;
 * TVMDEV_UART_CLOCK is the peripheral clock in Hz.
 *
 * Two modes per instance:
 * - polled (the console, and every instance by default): Send and Receive finish before
 *   they return, then signal their completion event;
 * - interrupt-driven, when TVMDEV_UART<n>_INTERRUPTS is defined (a link to an
 *   accelerator): Send and Receive start a transfer and return at once; the UART's TX
 *   and RX interrupts (lines TVMDEV_UART<n>_TX_IRQ and _RX_IRQ, board data, routed by
 *   startup.c's TVMDEV_IRQ_TABLE) move one byte each and signal
 *   ARM_USART_EVENT_SEND_COMPLETE / RECEIVE_COMPLETE from the interrupt when the count is
 *   reached. GetTxCount / GetRxCount follow the transfer; Control(ARM_USART_ABORT_RECEIVE
 *   or ABORT_SEND) ends it early (how a caller gives up after a timeout).
 *   The receive interrupt is enabled only while a Receive is outstanding: between two
 *   Receives a byte waits in the UART's one-byte buffer (on QEMU the sender then waits
 *   too, so nothing is lost; real hardware would overrun, and a driver there would keep a
 *   ring buffer instead).
 */
#include <stddef.h>
#include <stdint.h>

#include "Driver_USART.h"
#include "nvic.h"

#if defined(TVMDEV_UART0_INTERRUPTS) || defined(TVMDEV_UART1_INTERRUPTS) ||                \
    defined(TVMDEV_UART2_INTERRUPTS) || defined(TVMDEV_UART3_INTERRUPTS) ||                \
    defined(TVMDEV_UART4_INTERRUPTS)
#ifndef TVMDEV_IRQ_TABLE
#error "an interrupt-driven UART needs startup.c's TVMDEV_IRQ_TABLE"
#endif
#else
/* Every instance is polled: no interrupt is ever attached. */
#define tvmdev_irq_attach(irqn, handler) ((void)(irqn), (void)(handler))
#define tvmdev_irq_detach(irqn) ((void)(irqn))
#define tvmdev_irq_pend(irqn) ((void)(irqn))
#endif

#ifndef TVMDEV_UART_CLOCK
#error "define TVMDEV_UART_CLOCK (the UART's clock in Hz)"
#endif

#define UART_DATA 0x000U
#define UART_STATE 0x004U
#define UART_CTRL 0x008U
#define UART_INTSTATUS 0x00CU /* read: pending interrupts; write 1 to clear (INTCLEAR) */
#define UART_BAUDDIV 0x010U
#define STATE_TX_FULL (1U << 0)
#define STATE_RX_FULL (1U << 1)
#define CTRL_TX_EN (1U << 0)
#define CTRL_RX_EN (1U << 1)
#define CTRL_TX_INTEN (1U << 2)
#define CTRL_RX_INTEN (1U << 3)
#define INT_TX (1U << 0) /* the transmit buffer went from full to empty */
#define INT_RX (1U << 1) /* a byte arrived */
#define DEFAULT_BAUD 115200U
#define NO_IRQ 0xFFFFFFFFU

struct uart {
    uintptr_t base;
    uint32_t rx_irq, tx_irq; /* NO_IRQ: polled */
    void (*isr)(void);
    ARM_USART_SignalEvent_t cb_event;
    uint8_t initialized;
    uint8_t powered;
    volatile uint32_t tx_count;
    volatile uint32_t rx_count;
    /* interrupt mode: the transfers in flight */
    const uint8_t *tx_buf;
    uint8_t *rx_buf;
    uint32_t tx_num, rx_num;
    volatile uint8_t tx_busy, rx_busy;
};

/* Thread and interrupt both change CTRL and the transfer state: these short sections
 * mask interrupts (PRIMASK), and nest, so a callback may start a transfer. */
static uint32_t lock(void)
{
    uint32_t primask;

    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    return primask;
}

static void unlock(uint32_t primask)
{
    __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
}

static volatile uint32_t *reg(const struct uart *u, uint32_t offset)
{
    return (volatile uint32_t *)(u->base + offset);
}

static int irq_mode(const struct uart *u)
{
    return u->rx_irq != NO_IRQ;
}

static void ctrl_update(struct uart *u, uint32_t set, uint32_t clear)
{
    uint32_t key = lock();

    *reg(u, UART_CTRL) = (*reg(u, UART_CTRL) & ~clear) | set;
    unlock(key);
}

static const ARM_DRIVER_VERSION version = {ARM_USART_API_VERSION, ARM_DRIVER_VERSION_MAJOR_MINOR(1, 1)};

static ARM_DRIVER_VERSION uart_get_version(void)
{
    return version;
}

static ARM_USART_CAPABILITIES uart_get_capabilities(void)
{
    ARM_USART_CAPABILITIES caps = {0};

    caps.asynchronous = 1U;
    caps.event_tx_complete = 1U;
    return caps;
}

static int32_t uart_initialize(struct uart *u, ARM_USART_SignalEvent_t cb_event)
{
    u->cb_event = cb_event;
    u->initialized = 1U;
    u->tx_count = 0U;
    u->rx_count = 0U;
    u->tx_busy = 0U;
    u->rx_busy = 0U;
    return ARM_DRIVER_OK;
}

static void power_off(struct uart *u)
{
    *reg(u, UART_CTRL) = 0U;
    if (irq_mode(u) && u->powered) {
        tvmdev_irq_detach(u->rx_irq);
        tvmdev_irq_detach(u->tx_irq);
    }
    u->tx_busy = 0U;
    u->rx_busy = 0U;
    u->powered = 0U;
}

static int32_t uart_uninitialize(struct uart *u)
{
    power_off(u);
    u->initialized = 0U;
    return ARM_DRIVER_OK;
}

static int32_t set_baud(struct uart *u, uint32_t baud)
{
    uint32_t div = baud != 0U ? TVMDEV_UART_CLOCK / baud : 0U;

    if (div < 16U) { /* the CMSDK UART needs a divider of at least 16 */
        return ARM_USART_ERROR_BAUDRATE;
    }
    *reg(u, UART_BAUDDIV) = div;
    return ARM_DRIVER_OK;
}

static int32_t uart_power_control(struct uart *u, ARM_POWER_STATE state)
{
    if (!u->initialized) {
        return ARM_DRIVER_ERROR;
    }
    switch (state) {
    case ARM_POWER_FULL:
        if (set_baud(u, DEFAULT_BAUD) != ARM_DRIVER_OK) {
            return ARM_DRIVER_ERROR;
        }
        *reg(u, UART_CTRL) = CTRL_TX_EN | CTRL_RX_EN;
        if (irq_mode(u) && !u->powered) {
            *reg(u, UART_INTSTATUS) = INT_TX | INT_RX;
            tvmdev_irq_attach(u->rx_irq, u->isr);
            tvmdev_irq_attach(u->tx_irq, u->isr);
        }
        u->powered = 1U;
        return ARM_DRIVER_OK;
    case ARM_POWER_OFF:
        power_off(u);
        return ARM_DRIVER_OK;
    default:
        return ARM_DRIVER_ERROR_UNSUPPORTED;
    }
}

static void notify(const struct uart *u, uint32_t event)
{
    if (u->cb_event != NULL) {
        u->cb_event(event);
    }
}

static int32_t send_polled(struct uart *u, const uint8_t *bytes, uint32_t num)
{
    uint32_t i;

    u->tx_count = 0U;
    for (i = 0; i < num; i++) {
        while (*reg(u, UART_STATE) & STATE_TX_FULL) {
        }
        *reg(u, UART_DATA) = bytes[i];
        u->tx_count++;
    }
    notify(u, ARM_USART_EVENT_SEND_COMPLETE);
    return ARM_DRIVER_OK;
}

/* Interrupt mode: the first byte goes now, each TX interrupt sends the next. */
static int32_t send_irq(struct uart *u, const uint8_t *bytes, uint32_t num)
{
    uint32_t key = lock();

    if (u->tx_busy) {
        unlock(key);
        return ARM_DRIVER_ERROR_BUSY;
    }
    u->tx_buf = bytes;
    u->tx_num = num;
    u->tx_count = 1U;
    u->tx_busy = 1U;
    *reg(u, UART_CTRL) |= CTRL_TX_INTEN;
    while (*reg(u, UART_STATE) & STATE_TX_FULL) {
    }
    *reg(u, UART_DATA) = bytes[0];
    unlock(key);
    return ARM_DRIVER_OK;
}

static int32_t uart_send(struct uart *u, const void *data, uint32_t num)
{
    if (data == NULL || num == 0U) {
        return ARM_DRIVER_ERROR_PARAMETER;
    }
    if (!u->powered) {
        return ARM_DRIVER_ERROR;
    }
    return irq_mode(u) ? send_irq(u, (const uint8_t *)data, num)
                       : send_polled(u, (const uint8_t *)data, num);
}

/* Move what has arrived into the receive in flight; 1 when it is complete (the receive
 * interrupt is then off again). Called with interrupts masked. */
static int drain_rx(struct uart *u)
{
    while (u->rx_count < u->rx_num && (*reg(u, UART_STATE) & STATE_RX_FULL)) {
        u->rx_buf[u->rx_count] = (uint8_t)*reg(u, UART_DATA);
        u->rx_count = u->rx_count + 1U;
    }
    if (u->rx_count < u->rx_num) {
        return 0;
    }
    *reg(u, UART_CTRL) &= ~CTRL_RX_INTEN;
    u->rx_busy = 0U;
    return 1;
}

static int32_t receive_irq(struct uart *u, uint8_t *bytes, uint32_t num)
{
    uint32_t key = lock();

    if (u->rx_busy) {
        unlock(key);
        return ARM_DRIVER_ERROR_BUSY;
    }
    u->rx_buf = bytes;
    u->rx_num = num;
    u->rx_count = 0U;
    u->rx_busy = 1U;
    *reg(u, UART_INTSTATUS) = INT_RX;
    *reg(u, UART_CTRL) |= CTRL_RX_INTEN;
    /* A byte already waiting raised no interrupt (it came while the receive interrupt
     * was off): pend the line, so the interrupt takes it. Never complete here: a
     * callback that receives again from its own event would recurse once per byte. */
    if (*reg(u, UART_STATE) & STATE_RX_FULL) {
        tvmdev_irq_pend(u->rx_irq);
    }
    unlock(key);
    return ARM_DRIVER_OK;
}

static int32_t uart_receive(struct uart *u, void *data, uint32_t num)
{
    uint8_t *bytes = (uint8_t *)data;

    if (data == NULL || num == 0U) {
        return ARM_DRIVER_ERROR_PARAMETER;
    }
    if (!u->powered) {
        return ARM_DRIVER_ERROR;
    }
    if (irq_mode(u)) {
        return receive_irq(u, bytes, num);
    }
    /* Polled: take what has arrived, up to num bytes (GetRxCount says how many). */
    u->rx_count = 0U;
    while (u->rx_count < num && (*reg(u, UART_STATE) & STATE_RX_FULL)) {
        bytes[u->rx_count] = (uint8_t)*reg(u, UART_DATA);
        u->rx_count = u->rx_count + 1U;
    }
    if (u->rx_count == num) {
        notify(u, ARM_USART_EVENT_RECEIVE_COMPLETE);
    }
    return ARM_DRIVER_OK;
}

/* The interrupt of both lines: one byte out, the bytes in. Clearing INTSTATUS before
 * touching DATA means an event that follows raises the line again. */
static void uart_isr(struct uart *u)
{
    uint32_t pending = *reg(u, UART_INTSTATUS) & (INT_TX | INT_RX);
    uint32_t events = 0U;

    *reg(u, UART_INTSTATUS) = pending;
    if ((pending & INT_TX) && u->tx_busy) {
        if (u->tx_count < u->tx_num) {
            *reg(u, UART_DATA) = u->tx_buf[u->tx_count];
            u->tx_count = u->tx_count + 1U;
        } else {
            *reg(u, UART_CTRL) &= ~CTRL_TX_INTEN;
            u->tx_busy = 0U;
            events |= ARM_USART_EVENT_SEND_COMPLETE;
        }
    }
    if (u->rx_busy && drain_rx(u)) {
        events |= ARM_USART_EVENT_RECEIVE_COMPLETE;
    }
    if (events != 0U) {
        notify(u, events);
    }
}

static int32_t uart_control(struct uart *u, uint32_t control, uint32_t arg)
{
    if (!u->powered) {
        return ARM_DRIVER_ERROR;
    }
    switch (control & ARM_USART_CONTROL_Msk) {
    case ARM_USART_MODE_ASYNCHRONOUS:
        return set_baud(u, arg);
    case ARM_USART_CONTROL_TX:
        ctrl_update(u, arg ? CTRL_TX_EN : 0U, arg ? 0U : CTRL_TX_EN);
        return ARM_DRIVER_OK;
    case ARM_USART_CONTROL_RX:
        ctrl_update(u, arg ? CTRL_RX_EN : 0U, arg ? 0U : CTRL_RX_EN);
        return ARM_DRIVER_OK;
    case ARM_USART_ABORT_SEND:
        ctrl_update(u, 0U, CTRL_TX_INTEN);
        u->tx_busy = 0U;
        return ARM_DRIVER_OK;
    case ARM_USART_ABORT_RECEIVE:
        ctrl_update(u, 0U, CTRL_RX_INTEN);
        u->rx_busy = 0U;
        return ARM_DRIVER_OK;
    default:
        return ARM_DRIVER_ERROR_UNSUPPORTED;
    }
}

static ARM_USART_STATUS uart_get_status(const struct uart *u)
{
    ARM_USART_STATUS status = {0};
    uint32_t state = *reg(u, UART_STATE);

    status.tx_busy = (u->tx_busy || (state & STATE_TX_FULL)) ? 1U : 0U;
    status.rx_busy = u->rx_busy ? 1U : 0U;
    return status;
}

static int32_t uart_set_modem_control(ARM_USART_MODEM_CONTROL control)
{
    (void)control;
    return ARM_DRIVER_ERROR_UNSUPPORTED;
}

static ARM_USART_MODEM_STATUS uart_get_modem_status(void)
{
    ARM_USART_MODEM_STATUS status = {0};

    return status;
}

static int32_t uart_transfer(const void *out, void *in, uint32_t num)
{
    (void)out;
    (void)in;
    (void)num;
    return ARM_DRIVER_ERROR_UNSUPPORTED; /* synchronous modes only */
}

/* One driver instance per defined TVMDEV_UART<n>_BASE; IRQS(n) is its interrupt lines,
 * or none (polled). */
#define TVMDEV_UART_INSTANCE(n, irqs)                                                     \
    static void uart##n##_isr(void);                                                      \
    static struct uart uart##n = {.base = TVMDEV_UART##n##_BASE, irqs,                    \
                                  .isr = uart##n##_isr};                                  \
    static void uart##n##_isr(void) { uart_isr(&uart##n); }                               \
    static int32_t uart##n##_initialize(ARM_USART_SignalEvent_t cb)                       \
    {                                                                                     \
        return uart_initialize(&uart##n, cb);                                             \
    }                                                                                     \
    static int32_t uart##n##_uninitialize(void) { return uart_uninitialize(&uart##n); }   \
    static int32_t uart##n##_power_control(ARM_POWER_STATE state)                         \
    {                                                                                     \
        return uart_power_control(&uart##n, state);                                       \
    }                                                                                     \
    static int32_t uart##n##_send(const void *data, uint32_t num)                         \
    {                                                                                     \
        return uart_send(&uart##n, data, num);                                            \
    }                                                                                     \
    static int32_t uart##n##_receive(void *data, uint32_t num)                            \
    {                                                                                     \
        return uart_receive(&uart##n, data, num);                                         \
    }                                                                                     \
    static uint32_t uart##n##_get_tx_count(void) { return uart##n.tx_count; }             \
    static uint32_t uart##n##_get_rx_count(void) { return uart##n.rx_count; }             \
    static int32_t uart##n##_control(uint32_t control, uint32_t arg)                      \
    {                                                                                     \
        return uart_control(&uart##n, control, arg);                                      \
    }                                                                                     \
    static ARM_USART_STATUS uart##n##_get_status(void) { return uart_get_status(&uart##n); } \
    ARM_DRIVER_USART Driver_USART##n = {                                                  \
        uart_get_version,       uart_get_capabilities,  uart##n##_initialize,             \
        uart##n##_uninitialize, uart##n##_power_control, uart##n##_send,                  \
        uart##n##_receive,      uart_transfer,          uart##n##_get_tx_count,           \
        uart##n##_get_rx_count, uart##n##_control,      uart##n##_get_status,             \
        uart_set_modem_control, uart_get_modem_status,                                    \
    };

#define POLLED .rx_irq = NO_IRQ, .tx_irq = NO_IRQ
#define IRQS(n) .rx_irq = TVMDEV_UART##n##_RX_IRQ, .tx_irq = TVMDEV_UART##n##_TX_IRQ

#ifdef TVMDEV_UART0_BASE
#ifdef TVMDEV_UART0_INTERRUPTS
TVMDEV_UART_INSTANCE(0, IRQS(0))
#else
TVMDEV_UART_INSTANCE(0, POLLED)
#endif
#endif
#ifdef TVMDEV_UART1_BASE
#ifdef TVMDEV_UART1_INTERRUPTS
TVMDEV_UART_INSTANCE(1, IRQS(1))
#else
TVMDEV_UART_INSTANCE(1, POLLED)
#endif
#endif
#ifdef TVMDEV_UART2_BASE
#ifdef TVMDEV_UART2_INTERRUPTS
TVMDEV_UART_INSTANCE(2, IRQS(2))
#else
TVMDEV_UART_INSTANCE(2, POLLED)
#endif
#endif
#ifdef TVMDEV_UART3_BASE
#ifdef TVMDEV_UART3_INTERRUPTS
TVMDEV_UART_INSTANCE(3, IRQS(3))
#else
TVMDEV_UART_INSTANCE(3, POLLED)
#endif
#endif
#ifdef TVMDEV_UART4_BASE
#ifdef TVMDEV_UART4_INTERRUPTS
TVMDEV_UART_INSTANCE(4, IRQS(4))
#else
TVMDEV_UART_INSTANCE(4, POLLED)
#endif
#endif
