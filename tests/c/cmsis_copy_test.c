/*
 * Exercises the copy functions of the generated CMSIS device "npu" (new-device npu
 * --platform cmsis --memory 4K, --cmsis-driver usart, spi or i2c: -DFAKE_USART,
 * -DFAKE_SPI or -DFAKE_I2C; with --rtos cmsis-rtos2: -DWITH_RTOS and the fake kernel of
 * fake_cmsis_rtos2.c) against a fake CMSIS-Driver with an accelerator behind it.
 *
 * The fake driver behaves as the CMSIS-Driver API reference describes: Initialize keeps
 * the SignalEvent callback; Send/Receive (MasterTransmit/MasterReceive on I2C) start a
 * transfer and report its end through the callback, here before they return, as a
 * driver whose transfer fits its FIFO does from the interrupt it raises. The accelerator
 * behind it decodes the frames the scaffold documents (command, address, size) into its
 * own memory, a plain array the test compares with.
 */
#include <stdio.h>
#include <string.h>

#include "tvm/device/npu/cmsis.h"
#include "expect.h"
#ifdef WITH_RTOS
#include "fake_cmsis_rtos2.h"
#endif

#if defined(FAKE_USART)
#define DRIVER_T ARM_DRIVER_USART
#define EVENT_T ARM_USART_SignalEvent_t
#define SEND_DONE ARM_USART_EVENT_SEND_COMPLETE
#define RECEIVE_DONE ARM_USART_EVENT_RECEIVE_COMPLETE
#define ERROR_EVENT ARM_USART_EVENT_RX_FRAMING_ERROR
#define ABORT_SEND ARM_USART_ABORT_SEND
#define ABORT_RECEIVE ARM_USART_ABORT_RECEIVE
#elif defined(FAKE_SPI)
#define DRIVER_T ARM_DRIVER_SPI
#define EVENT_T ARM_SPI_SignalEvent_t
#define SEND_DONE ARM_SPI_EVENT_TRANSFER_COMPLETE
#define RECEIVE_DONE ARM_SPI_EVENT_TRANSFER_COMPLETE
#define ERROR_EVENT ARM_SPI_EVENT_DATA_LOST
#define ABORT_SEND ARM_SPI_ABORT_TRANSFER
#define ABORT_RECEIVE ARM_SPI_ABORT_TRANSFER
#elif defined(FAKE_I2C)
#define DRIVER_T ARM_DRIVER_I2C
#define EVENT_T ARM_I2C_SignalEvent_t
#define SEND_DONE ARM_I2C_EVENT_TRANSFER_DONE
#define RECEIVE_DONE ARM_I2C_EVENT_TRANSFER_DONE
/* A NACK ends a transfer with both bits (Driver_I2C reference, MasterTransmit). */
#define ERROR_EVENT (ARM_I2C_EVENT_TRANSFER_DONE | ARM_I2C_EVENT_ADDRESS_NACK)
#define ABORT_SEND ARM_I2C_ABORT_TRANSFER
#define ABORT_RECEIVE ARM_I2C_ABORT_TRANSFER
#else
#error "build with -DFAKE_USART, -DFAKE_SPI or -DFAKE_I2C"
#endif

/* --- the accelerator behind the bus --------------------------------------------- */

static uint8_t device_memory[TVM_DEVICE_NPU_MEMORY_SIZE];
static enum { FRAME, WRITE_DATA, READ_DATA } expect = FRAME;
static uint32_t frame_addr, frame_size;
static int bad_frames;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void accept(const uint8_t *data, uint32_t n)
{
    if (expect == WRITE_DATA && n == frame_size) {
        memcpy(&device_memory[frame_addr], data, n);
        expect = FRAME;
    } else if (expect == FRAME && n == 9U && (data[0] == 'W' || data[0] == 'R')) {
        frame_addr = le32(data + 1);
        frame_size = le32(data + 5);
        if (frame_addr > sizeof device_memory || frame_size > sizeof device_memory - frame_addr) {
            bad_frames++; /* the scaffold checks ranges before it sends */
            return;
        }
        expect = data[0] == 'W' ? WRITE_DATA : READ_DATA;
    } else {
        bad_frames++;
        expect = FRAME;
    }
}

/* --- the fake CMSIS-Driver -------------------------------------------------------- */

static EVENT_T callback;
static enum { ANSWER, SILENT, FAIL } mode = ANSWER;
static int32_t next_result = ARM_DRIVER_OK;
static uint32_t aborts, transfers;
static int powered;

static int32_t take_result(void)
{
    int32_t r = next_result;
    next_result = ARM_DRIVER_OK;
    return r;
}

static int32_t fake_initialize(EVENT_T cb)
{
    callback = cb;
    return ARM_DRIVER_OK;
}

static int32_t fake_uninitialize(void)
{
    callback = NULL;
    return ARM_DRIVER_OK;
}

static int32_t fake_power(ARM_POWER_STATE state)
{
    powered = state == ARM_POWER_FULL;
    return ARM_DRIVER_OK;
}

static void end(uint32_t done)
{
    if (mode == ANSWER) {
        callback(done);
    } else if (mode == FAIL) {
        callback(ERROR_EVENT);
    }
}

static int32_t fake_send(const void *data, uint32_t num)
{
    int32_t r = take_result();

    if (r != ARM_DRIVER_OK) {
        return r;
    }
    CHECK(powered && callback != NULL);
    transfers++;
    if (mode == ANSWER) {
        accept(data, num);
    }
    end(SEND_DONE);
    return ARM_DRIVER_OK;
}

static int32_t fake_receive(void *data, uint32_t num)
{
    int32_t r = take_result();

    if (r != ARM_DRIVER_OK) {
        return r;
    }
    CHECK(powered && callback != NULL);
    transfers++;
    if (mode == ANSWER) {
        if (expect == READ_DATA && num == frame_size) {
            memcpy(data, &device_memory[frame_addr], num);
        } else {
            bad_frames++;
        }
        expect = FRAME;
    }
    end(RECEIVE_DONE);
    return ARM_DRIVER_OK;
}

static int32_t fake_control(uint32_t control, uint32_t arg)
{
    (void)arg;
    if (control == ABORT_SEND || control == ABORT_RECEIVE) {
        aborts++;
        expect = FRAME;
    }
    return ARM_DRIVER_OK;
}

#ifdef FAKE_I2C
static int pending_stop; /* the last transmit asked for no stop condition */

static int32_t fake_transmit(uint32_t addr, const uint8_t *data, uint32_t num, bool pending)
{
    CHECK(addr == TVM_DEVICE_NPU_BUS_ADDRESS);
    CHECK(pending == (num == 9U)); /* the frame, then the data in the same transfer */
    pending_stop = pending;
    return fake_send(data, num);
}

static int32_t fake_master_receive(uint32_t addr, uint8_t *data, uint32_t num, bool pending)
{
    CHECK(addr == TVM_DEVICE_NPU_BUS_ADDRESS && !pending && pending_stop);
    return fake_receive(data, num);
}

static DRIVER_T fake_driver = {
    .Initialize = fake_initialize,
    .Uninitialize = fake_uninitialize,
    .PowerControl = fake_power,
    .MasterTransmit = fake_transmit,
    .MasterReceive = fake_master_receive,
    .Control = fake_control,
};
#else
static DRIVER_T fake_driver = {
    .Initialize = fake_initialize,
    .Uninitialize = fake_uninitialize,
    .PowerControl = fake_power,
    .Send = fake_send,
    .Receive = fake_receive,
    .Control = fake_control,
};
#endif

/* More peripherals of the same type: each keeps its own callback (a driver instance's
 * SignalEvent, as Driver_USART1 and Driver_USART2 keep theirs). Only Initialize and
 * Uninitialize are called on them here. */
#define SPARE_DRIVERS 4
static EVENT_T spare_callbacks[SPARE_DRIVERS];
#define SPARE(n)                                                                           \
    static int32_t spare_initialize_##n(EVENT_T cb)                                      \
    {                                                                                      \
        spare_callbacks[n] = cb;                                                           \
        return ARM_DRIVER_OK;                                                              \
    }                                                                                      \
    static int32_t spare_uninitialize_##n(void)                                          \
    {                                                                                      \
        spare_callbacks[n] = NULL;                                                         \
        return ARM_DRIVER_OK;                                                              \
    }
SPARE(0)
SPARE(1)
SPARE(2)
SPARE(3)
static DRIVER_T spare_drivers[SPARE_DRIVERS] = {
    {.Initialize = spare_initialize_0, .Uninitialize = spare_uninitialize_0},
    {.Initialize = spare_initialize_1, .Uninitialize = spare_uninitialize_1},
    {.Initialize = spare_initialize_2, .Uninitialize = spare_uninitialize_2},
    {.Initialize = spare_initialize_3, .Uninitialize = spare_uninitialize_3},
};

/* Four instances of the kind, each on its own peripheral, get their own events; a fifth
 * is refused (four slots), and a slot Destroy frees serves the next Init. */
static void several_instances(tvm_device_npu_t *first)
{
    static tvm_device_npu_t more[SPARE_DRIVERS];
    int i;

    for (i = 0; i < 3; i++) {
        EXPECT(TVMDeviceNpuInit(&more[i], &spare_drivers[i]), TVM_DEVICE_OK);
        CHECK(spare_callbacks[i] != NULL && spare_callbacks[i] != callback);
    }
    EXPECT(TVMDeviceNpuInit(&more[3], &spare_drivers[3]), TVM_DEVICE_ERR_BUSY);
    first->user.events = 0U;
    spare_callbacks[1](SEND_DONE);
    CHECK(more[1].user.events == SEND_DONE);
    CHECK(more[0].user.events == 0U && more[2].user.events == 0U && first->user.events == 0U);
    callback(RECEIVE_DONE);
    CHECK(first->user.events == RECEIVE_DONE && more[1].user.events == SEND_DONE);
    first->user.events = 0U;
    EXPECT(TVMDeviceNpuDestroy(&more[1]), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuInit(&more[3], &spare_drivers[3]), TVM_DEVICE_OK);
    spare_callbacks[3](SEND_DONE);
    CHECK(more[3].user.events == SEND_DONE && first->user.events == 0U);
    for (i = 0; i < SPARE_DRIVERS; i++) {
        if (i != 1) {
            EXPECT(TVMDeviceNpuDestroy(&more[i]), TVM_DEVICE_OK);
        }
    }
}

static void pattern(uint8_t *buf, uint32_t n, uint32_t seed)
{
    uint32_t i, x = seed;

    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
}

int main(void)
{
    static uint8_t in[TVM_DEVICE_NPU_MEMORY_SIZE], out[TVM_DEVICE_NPU_MEMORY_SIZE];
    static tvm_device_npu_t dev, other;
    const uint32_t size = TVM_DEVICE_NPU_MEMORY_SIZE;
    uint32_t before;

#ifdef WITH_RTOS
    fake_rtos_set_state(osKernelRunning);
#endif
    EXPECT(TVMDeviceNpuCopyTo(NULL, 0, in, 4), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuWait(&dev, 10), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuInit(&dev, &fake_driver), TVM_DEVICE_OK);
    CHECK(callback != NULL); /* the copies need the driver's events */
    /* A peripheral serves one instance. */
    EXPECT(TVMDeviceNpuInit(&other, &fake_driver), TVM_DEVICE_ERR_BUSY);
    several_instances(&dev);
    /* Initialised but not active: the peripheral is off. */
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuActivate(&dev), TVM_DEVICE_OK);

    /* Round trips: all of it, then pieces at both ends; the accelerator holds the bytes. */
    pattern(in, size, 3);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, size), TVM_DEVICE_OK);
    CHECK(memcmp(device_memory, in, size) == 0);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, size), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, size) == 0);
    pattern(in, 64, 4);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 64, in, 64), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 5, in, 3), TVM_DEVICE_OK);
    memset(out, 0, size);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size - 64, 64), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, 64) == 0);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 5, 3), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, 3) == 0);
    CHECK(bad_frames == 0);

    /* Out of range or NULL: refused before anything reaches the bus. */
    before = transfers;
    EXPECT(TVMDeviceNpuCopyTo(&dev, size - 4, in, 5), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0xFFFFFFF0u, in, 32), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, size, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, NULL, 0, 1), TVM_DEVICE_ERR_INVALID);
    EXPECT(TVMDeviceNpuCopyTo(&dev, size, in, 0), TVM_DEVICE_OK);
    CHECK(transfers == before);

    /* The driver's own errors, each mapped; an error event is an I/O error. */
    next_result = ARM_DRIVER_ERROR_BUSY;
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_BUSY);
    next_result = ARM_DRIVER_ERROR;
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 4), TVM_DEVICE_ERR_IO);
    expect = FRAME;
    mode = FAIL;
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_IO);
    /* A device that never answers: the transfer times out and is aborted. */
    mode = SILENT;
    before = aborts;
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 0, 4), TVM_DEVICE_ERR_TIMEOUT);
    CHECK(aborts == before + 1);
    /* ... and the next copy after it works again. */
    mode = ANSWER;
    expect = FRAME;
    pattern(in, 16, 5);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 32, in, 16), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyFrom(&dev, out, 32, 16), TVM_DEVICE_OK);
    CHECK(memcmp(in, out, 16) == 0);

    EXPECT(TVMDeviceNpuWait(&dev, 10), TVM_DEVICE_OK); /* synchronous: nothing pending */
    EXPECT(TVMDeviceNpuDeactivate(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuDestroy(&dev), TVM_DEVICE_OK);
    EXPECT(TVMDeviceNpuCopyTo(&dev, 0, in, 4), TVM_DEVICE_ERR_NOT_READY);
    EXPECT(TVMDeviceNpuInit(&other, &fake_driver), TVM_DEVICE_OK); /* the slot is free */
    EXPECT(TVMDeviceNpuDestroy(&other), TVM_DEVICE_OK);
#ifdef WITH_RTOS
    CHECK(fake_rtos_live_semaphores() == 0);
#endif
    printf("%d failures\n", failures);
    return failures != 0;
}
