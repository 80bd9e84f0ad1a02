/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-memory CMSIS-Drivers for tvmdev's firmware: Driver_SPI0/1 and Driver_I2C0/1, which
 * the harness passes to devices generated with --cmsis-driver spi or i2c (a USART device
 * gets a CMSDK UART, cmsdk_uart.c). Data sent is kept in a loopback buffer and received
 * back. With TVMDEV_RTOS, powering up or down takes TVMDEV_POWER_TICKS kernel ticks
 * (default 2), a slow peripheral that shows races in Activate/Deactivate; the drivers
 * count power-ups and power-downs and PowerControl calls made while another one of the
 * same driver was in progress (tvmdev_mem_driver_stats).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "Driver_I2C.h"
#include "Driver_SPI.h"
#ifdef TVMDEV_RTOS
#include "cmsis_os2.h"
#ifndef TVMDEV_POWER_TICKS
#define TVMDEV_POWER_TICKS 2U
#endif
#endif

#define LOOPBACK 64U

struct mem_driver {
    uint8_t data[LOOPBACK];
    uint32_t count;
    volatile uint32_t powered, ups, downs, in_power, overlaps;
};

void tvmdev_mem_driver_stats(int which, uint32_t *ups, uint32_t *downs, uint32_t *overlaps);

static struct mem_driver mem[4]; /* SPI0, SPI1, I2C0, I2C1 */

static int32_t power(struct mem_driver *d, ARM_POWER_STATE state)
{
    if (state != ARM_POWER_FULL && state != ARM_POWER_OFF) {
        return ARM_DRIVER_ERROR_UNSUPPORTED;
    }
    if (++d->in_power > 1U) {
        d->overlaps++;
    }
#ifdef TVMDEV_RTOS
    (void)osDelay(TVMDEV_POWER_TICKS);
#endif
    if (state == ARM_POWER_FULL) {
        d->powered = 1U;
        d->ups++;
    } else {
        d->powered = 0U;
        d->downs++;
    }
    d->in_power--;
    return ARM_DRIVER_OK;
}

static int32_t put_data(struct mem_driver *d, const void *data, uint32_t num)
{
    const uint8_t *in = data;
    uint32_t i;

    if (!d->powered) {
        return ARM_DRIVER_ERROR;
    }
    for (i = 0; i < num; i++) {
        d->data[i % LOOPBACK] = in[i];
    }
    d->count = num;
    return ARM_DRIVER_OK;
}

static int32_t get_data(struct mem_driver *d, void *data, uint32_t num)
{
    uint8_t *out = data;
    uint32_t i;

    if (!d->powered) {
        return ARM_DRIVER_ERROR;
    }
    for (i = 0; i < num; i++) {
        out[i] = d->data[i % LOOPBACK];
    }
    d->count = num;
    return ARM_DRIVER_OK;
}

void tvmdev_mem_driver_stats(int which, uint32_t *ups, uint32_t *downs, uint32_t *overlaps)
{
    *ups = mem[which].ups;
    *downs = mem[which].downs;
    *overlaps = mem[which].overlaps;
}

static ARM_DRIVER_VERSION version(void)
{
    ARM_DRIVER_VERSION v = {0x0200U, 0x0100U};

    return v;
}

/* One SPI driver's functions, on mem[N]. */
#define MEM_SPI(N)                                                                       \
    static ARM_SPI_CAPABILITIES spi##N##_caps(void)                                      \
    {                                                                                    \
        ARM_SPI_CAPABILITIES c = {0};                                                    \
        return c;                                                                        \
    }                                                                                    \
    static int32_t spi##N##_init(ARM_SPI_SignalEvent_t cb)                               \
    {                                                                                    \
        (void)cb;                                                                        \
        return ARM_DRIVER_OK;                                                            \
    }                                                                                    \
    static int32_t spi##N##_uninit(void) { return ARM_DRIVER_OK; }                       \
    static int32_t spi##N##_power(ARM_POWER_STATE s) { return power(&mem[N], s); }       \
    static int32_t spi##N##_send(const void *d, uint32_t n) { return put_data(&mem[N], d, n); } \
    static int32_t spi##N##_receive(void *d, uint32_t n) { return get_data(&mem[N], d, n); } \
    static int32_t spi##N##_transfer(const void *o, void *i, uint32_t n)                 \
    {                                                                                    \
        int32_t r = put_data(&mem[N], o, n);                                             \
        return r == ARM_DRIVER_OK ? get_data(&mem[N], i, n) : r;                         \
    }                                                                                    \
    static uint32_t spi##N##_count(void) { return mem[N].count; }                        \
    static int32_t spi##N##_control(uint32_t c, uint32_t a)                              \
    {                                                                                    \
        (void)c;                                                                         \
        (void)a;                                                                         \
        return ARM_DRIVER_OK;                                                            \
    }                                                                                    \
    static ARM_SPI_STATUS spi##N##_status(void)                                          \
    {                                                                                    \
        ARM_SPI_STATUS s = {0};                                                          \
        return s;                                                                        \
    }                                                                                    \
    ARM_DRIVER_SPI Driver_SPI##N = {version, spi##N##_caps, spi##N##_init,               \
                                    spi##N##_uninit, spi##N##_power, spi##N##_send,       \
                                    spi##N##_receive, spi##N##_transfer, spi##N##_count,  \
                                    spi##N##_control, spi##N##_status}

/* One I2C driver's functions, on mem[2 + N]. */
#define MEM_I2C(N)                                                                       \
    static ARM_I2C_CAPABILITIES i2c##N##_caps(void)                                      \
    {                                                                                    \
        ARM_I2C_CAPABILITIES c = {0};                                                    \
        return c;                                                                        \
    }                                                                                    \
    static int32_t i2c##N##_init(ARM_I2C_SignalEvent_t cb)                               \
    {                                                                                    \
        (void)cb;                                                                        \
        return ARM_DRIVER_OK;                                                            \
    }                                                                                    \
    static int32_t i2c##N##_uninit(void) { return ARM_DRIVER_OK; }                       \
    static int32_t i2c##N##_power(ARM_POWER_STATE s) { return power(&mem[2 + N], s); }   \
    static int32_t i2c##N##_mtx(uint32_t a, const uint8_t *d, uint32_t n, bool p)        \
    {                                                                                    \
        (void)a;                                                                         \
        (void)p;                                                                         \
        return put_data(&mem[2 + N], d, n);                                              \
    }                                                                                    \
    static int32_t i2c##N##_mrx(uint32_t a, uint8_t *d, uint32_t n, bool p)              \
    {                                                                                    \
        (void)a;                                                                         \
        (void)p;                                                                         \
        return get_data(&mem[2 + N], d, n);                                              \
    }                                                                                    \
    static int32_t i2c##N##_stx(const uint8_t *d, uint32_t n) { return put_data(&mem[2 + N], d, n); } \
    static int32_t i2c##N##_srx(uint8_t *d, uint32_t n) { return get_data(&mem[2 + N], d, n); } \
    static int32_t i2c##N##_count(void) { return (int32_t)mem[2 + N].count; }            \
    static int32_t i2c##N##_control(uint32_t c, uint32_t a)                              \
    {                                                                                    \
        (void)c;                                                                         \
        (void)a;                                                                         \
        return ARM_DRIVER_OK;                                                            \
    }                                                                                    \
    static ARM_I2C_STATUS i2c##N##_status(void)                                          \
    {                                                                                    \
        ARM_I2C_STATUS s = {0};                                                          \
        return s;                                                                        \
    }                                                                                    \
    ARM_DRIVER_I2C Driver_I2C##N = {version, i2c##N##_caps, i2c##N##_init,               \
                                    i2c##N##_uninit, i2c##N##_power, i2c##N##_mtx,        \
                                    i2c##N##_mrx, i2c##N##_stx, i2c##N##_srx,             \
                                    i2c##N##_count, i2c##N##_control, i2c##N##_status}

extern ARM_DRIVER_SPI Driver_SPI0, Driver_SPI1;
extern ARM_DRIVER_I2C Driver_I2C0, Driver_I2C1;
MEM_SPI(0);
MEM_SPI(1);
MEM_I2C(0);
MEM_I2C(1);
