/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A CMSIS-Driver USART (Driver_USART0..4) for Arm's CMSDK APB UART, as on the MPS2 and
 * MPS3 boards. Polled: Send and Receive finish before they return, then signal their
 * completion event. Each instance exists when TVMDEV_UART<n>_BASE is defined;
 * TVMDEV_UART_CLOCK is the peripheral clock in Hz.
 */
#include <stddef.h>
#include <stdint.h>

#include "Driver_USART.h"

#ifndef TVMDEV_UART_CLOCK
#error "define TVMDEV_UART_CLOCK (the UART's clock in Hz)"
#endif

#define UART_DATA 0x000U
#define UART_STATE 0x004U
#define UART_CTRL 0x008U
#define UART_BAUDDIV 0x010U
#define STATE_TX_FULL (1U << 0)
#define STATE_RX_FULL (1U << 1)
#define CTRL_TX_EN (1U << 0)
#define CTRL_RX_EN (1U << 1)
#define DEFAULT_BAUD 115200U

struct uart {
    uintptr_t base;
    ARM_USART_SignalEvent_t cb_event;
    uint8_t initialized;
    uint8_t powered;
    uint32_t tx_count;
    uint32_t rx_count;
};

static volatile uint32_t *reg(const struct uart *u, uint32_t offset)
{
    return (volatile uint32_t *)(u->base + offset);
}

static const ARM_DRIVER_VERSION version = {ARM_USART_API_VERSION, ARM_DRIVER_VERSION_MAJOR_MINOR(1, 0)};

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
    return ARM_DRIVER_OK;
}

static int32_t uart_uninitialize(struct uart *u)
{
    *reg(u, UART_CTRL) = 0U;
    u->initialized = 0U;
    u->powered = 0U;
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
        u->powered = 1U;
        return ARM_DRIVER_OK;
    case ARM_POWER_OFF:
        *reg(u, UART_CTRL) = 0U;
        u->powered = 0U;
        return ARM_DRIVER_OK;
    default:
        return ARM_DRIVER_ERROR_UNSUPPORTED;
    }
}

static int32_t uart_send(struct uart *u, const void *data, uint32_t num)
{
    const uint8_t *bytes = (const uint8_t *)data;
    uint32_t i;

    if (data == NULL || num == 0U) {
        return ARM_DRIVER_ERROR_PARAMETER;
    }
    if (!u->powered) {
        return ARM_DRIVER_ERROR;
    }
    u->tx_count = 0U;
    for (i = 0; i < num; i++) {
        while (*reg(u, UART_STATE) & STATE_TX_FULL) {
        }
        *reg(u, UART_DATA) = bytes[i];
        u->tx_count++;
    }
    if (u->cb_event != NULL) {
        u->cb_event(ARM_USART_EVENT_SEND_COMPLETE);
    }
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
    /* Polled: take what has arrived, up to num bytes (GetRxCount says how many). */
    u->rx_count = 0U;
    while (u->rx_count < num && (*reg(u, UART_STATE) & STATE_RX_FULL)) {
        bytes[u->rx_count++] = (uint8_t)*reg(u, UART_DATA);
    }
    if (u->rx_count == num && u->cb_event != NULL) {
        u->cb_event(ARM_USART_EVENT_RECEIVE_COMPLETE);
    }
    return ARM_DRIVER_OK;
}

static int32_t uart_control(struct uart *u, uint32_t control, uint32_t arg)
{
    uint32_t ctrl;

    if (!u->powered) {
        return ARM_DRIVER_ERROR;
    }
    ctrl = *reg(u, UART_CTRL);
    switch (control & ARM_USART_CONTROL_Msk) {
    case ARM_USART_MODE_ASYNCHRONOUS:
        return set_baud(u, arg);
    case ARM_USART_CONTROL_TX:
        *reg(u, UART_CTRL) = arg ? (ctrl | CTRL_TX_EN) : (ctrl & ~CTRL_TX_EN);
        return ARM_DRIVER_OK;
    case ARM_USART_CONTROL_RX:
        *reg(u, UART_CTRL) = arg ? (ctrl | CTRL_RX_EN) : (ctrl & ~CTRL_RX_EN);
        return ARM_DRIVER_OK;
    default:
        return ARM_DRIVER_ERROR_UNSUPPORTED;
    }
}

static ARM_USART_STATUS uart_get_status(const struct uart *u)
{
    ARM_USART_STATUS status = {0};
    uint32_t state = *reg(u, UART_STATE);

    status.tx_busy = (state & STATE_TX_FULL) ? 1U : 0U;
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

/* One driver instance per defined TVMDEV_UART<n>_BASE. */
#define TVMDEV_UART_INSTANCE(n)                                                           \
    static struct uart uart##n = {TVMDEV_UART##n##_BASE, NULL, 0U, 0U, 0U, 0U};           \
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

#ifdef TVMDEV_UART0_BASE
TVMDEV_UART_INSTANCE(0)
#endif
#ifdef TVMDEV_UART1_BASE
TVMDEV_UART_INSTANCE(1)
#endif
#ifdef TVMDEV_UART2_BASE
TVMDEV_UART_INSTANCE(2)
#endif
#ifdef TVMDEV_UART3_BASE
TVMDEV_UART_INSTANCE(3)
#endif
#ifdef TVMDEV_UART4_BASE
TVMDEV_UART_INSTANCE(4)
#endif
