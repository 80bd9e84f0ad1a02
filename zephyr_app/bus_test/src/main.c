/*
 * The skeleton driver of "npu" on SPI or I2C (tvmdev new-device npu --platform zephyr
 * --zephyr-driver --bus spi|i2c --vendor acme-ai --memory 4K) on a real Zephyr kernel,
 * with the accelerator emulated behind native_sim's SPI or I2C emulator (app.overlay:
 * SPI; i2c.overlay: I2C):
 * - runtime PM: the device is suspended after init, Activate resumes it (its PM action
 *   callback runs: the state is ACTIVE), Deactivate suspends it again;
 * - the reset line was pulsed and released at init;
 * - the copy functions move bytes over the bus (spi_write_dt/spi_transceive_dt,
 *   i2c_transfer_dt/i2c_write_read_dt) into the accelerator's memory and back, and
 *   refuse out-of-range addresses;
 * - Wait on a pending job times out without an interrupt and returns once the IRQ line
 *   rises (the driver's GPIO callback gives its semaphore).
 */
#define DT_DRV_COMPAT acme_ai_npu

#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/emul.h>
#include <zephyr/drivers/gpio/gpio_emul.h>
#include <zephyr/pm/device.h>
#include <zephyr/sys/byteorder.h>
#include <zephyr/ztest.h>

#include "tvm/device/npu/zephyr.h"

#define NPU DT_NODELABEL(npu0)
#define GPIO0 DEVICE_DT_GET(DT_NODELABEL(gpio0))

/* --- the accelerator, behind the SPI emulator ------------------------------------ */

/* Its memory; it decodes the skeleton driver's frames ('W' or 'R', address, size, each
 * 32 bits little-endian) as the driver's comment documents them: a write frame comes
 * with the bytes to write, a read frame with a buffer for the bytes read. */
static uint8_t npu_memory[TVM_DEVICE_NPU_MEMORY_SIZE];
static int frames, bad_frames;

static int npu_frame(const uint8_t *head, size_t head_len, const void *wr, size_t wr_len,
                     void *rd, size_t rd_len)
{
    uint32_t addr, n;

    if (head_len != 9) {
        bad_frames++;
        return -EIO;
    }
    addr = sys_get_le32(&head[1]);
    n = sys_get_le32(&head[5]);
    if (addr > sizeof(npu_memory) || n > sizeof(npu_memory) - addr) {
        bad_frames++;
        return -EIO;
    }
    frames++;
    if (head[0] == 'W' && wr != NULL && wr_len == n && rd == NULL) {
        memcpy(&npu_memory[addr], wr, n);
        return 0;
    }
    if (head[0] == 'R' && rd != NULL && rd_len == n && wr == NULL) {
        memcpy(rd, &npu_memory[addr], n);
        return 0;
    }
    bad_frames++;
    return -EIO;
}

#if DT_ON_BUS(NPU, spi)
#include <zephyr/drivers/spi_emul.h>

/* SPI: the frame, then the data, in the transmit buffers; a read skips as many bytes
 * received as the frame has. */
static int npu_io(const struct emul *target, const struct spi_config *config,
                  const struct spi_buf_set *tx, const struct spi_buf_set *rx)
{
    ARG_UNUSED(target);
    ARG_UNUSED(config);
    if (tx == NULL || tx->count < 1) {
        bad_frames++;
        return -EIO;
    }
    if (tx->count == 2 && rx == NULL) {
        return npu_frame(tx->buffers[0].buf, tx->buffers[0].len, tx->buffers[1].buf,
                         tx->buffers[1].len, NULL, 0);
    }
    if (tx->count == 1 && rx != NULL && rx->count == 2 && rx->buffers[0].buf == NULL &&
        rx->buffers[0].len == tx->buffers[0].len) {
        return npu_frame(tx->buffers[0].buf, tx->buffers[0].len, NULL, 0, rx->buffers[1].buf,
                         rx->buffers[1].len);
    }
    bad_frames++;
    return -EIO;
}

static struct spi_emul_api npu_emul_api = {.io = npu_io};
#else
#include <zephyr/drivers/i2c.h>
#include <zephyr/drivers/i2c_emul.h>

/* I2C: a write message with the frame, then a write (with a stop) or a read. */
static int npu_transfer(const struct emul *target, struct i2c_msg *msgs, int num_msgs,
                        int addr)
{
    ARG_UNUSED(target);
    ARG_UNUSED(addr);
    if (num_msgs != 2 || (msgs[0].flags & I2C_MSG_READ) != 0) {
        bad_frames++;
        return -EIO;
    }
    if ((msgs[1].flags & I2C_MSG_READ) != 0) {
        return npu_frame(msgs[0].buf, msgs[0].len, NULL, 0, msgs[1].buf, msgs[1].len);
    }
    return npu_frame(msgs[0].buf, msgs[0].len, msgs[1].buf, msgs[1].len, NULL, 0);
}

static struct i2c_emul_api npu_emul_api = {.transfer = npu_transfer};
#endif

static int npu_emul_init(const struct emul *target, const struct device *parent)
{
    ARG_UNUSED(target);
    ARG_UNUSED(parent);
    return 0;
}

EMUL_DT_INST_DEFINE(0, npu_emul_init, NULL, NULL, &npu_emul_api, NULL);

/* --- the tests ----------------------------------------------------------------------- */

static tvm_device_npu_t npu;

static enum pm_device_state state(void)
{
    enum pm_device_state s = PM_DEVICE_STATE_OFF;

    zassert_ok(pm_device_state_get(DEVICE_DT_GET(NPU), &s));
    return s;
}

static void *setup(void)
{
    zassert_equal(TVMDeviceNpuInit(&npu, DEVICE_DT_GET(NPU)), TVM_DEVICE_OK);
    return NULL;
}

ZTEST(device_bus, test_runtime_pm)
{
    zassert_equal(state(), PM_DEVICE_STATE_SUSPENDED, "runtime PM is not enabled");
    zassert_equal(TVMDeviceNpuActivate(&npu), TVM_DEVICE_OK);
    zassert_equal(state(), PM_DEVICE_STATE_ACTIVE, "Activate did not resume it");
    zassert_equal(TVMDeviceNpuDeactivate(&npu), TVM_DEVICE_OK);
    zassert_equal(state(), PM_DEVICE_STATE_SUSPENDED, "Deactivate did not suspend it");
}

ZTEST(device_bus, test_reset_released)
{
    /* reset-gpios is active low: released is a high level. */
    zassert_equal(gpio_emul_output_get(GPIO0, 2), 1);
}

ZTEST(device_bus, test_copies_cross_the_bus)
{
    static uint8_t in[TVM_DEVICE_NPU_MEMORY_SIZE], out[TVM_DEVICE_NPU_MEMORY_SIZE];
    const uint32_t size = TVM_DEVICE_NPU_MEMORY_SIZE;
    uint32_t i;

    for (i = 0; i < size; i++) {
        in[i] = (uint8_t)(i * 13u + 5u);
    }
    zassert_equal(TVMDeviceNpuActivate(&npu), TVM_DEVICE_OK);
    zassert_equal(TVMDeviceNpuOpen(&npu), TVM_DEVICE_OK);
    zassert_equal(TVMDeviceNpuCopyTo(&npu, 0, in, size), TVM_DEVICE_OK);
    zassert_mem_equal(npu_memory, in, size);
    zassert_equal(TVMDeviceNpuCopyFrom(&npu, out, 0, size), TVM_DEVICE_OK);
    zassert_mem_equal(out, in, size);
    zassert_equal(TVMDeviceNpuCopyTo(&npu, size - 16, in + 7, 16), TVM_DEVICE_OK);
    zassert_equal(TVMDeviceNpuCopyFrom(&npu, out, size - 16, 16), TVM_DEVICE_OK);
    zassert_mem_equal(out, in + 7, 16);
    zassert_equal(TVMDeviceNpuCopyTo(&npu, size - 15, in, 16), TVM_DEVICE_ERR_INVALID);
    zassert_equal(frames, 4);
    zassert_equal(bad_frames, 0);
    zassert_equal(TVMDeviceNpuClose(&npu), TVM_DEVICE_OK);
    zassert_equal(TVMDeviceNpuDeactivate(&npu), TVM_DEVICE_OK);
}

ZTEST(device_bus, test_wait_takes_the_irq)
{
    zassert_equal(TVMDeviceNpuWait(&npu, 10), TVM_DEVICE_OK); /* nothing pending */
    atomic_set(&npu.user.pending, 1); /* as an operator that returned PENDING would */
    zassert_equal(TVMDeviceNpuWait(&npu, 20), TVM_DEVICE_ERR_TIMEOUT);
    zassert_ok(gpio_emul_input_set(GPIO0, 1, 1)); /* the accelerator's job ended */
    zassert_equal(TVMDeviceNpuWait(&npu, 20), TVM_DEVICE_OK);
    zassert_equal(atomic_get(&npu.user.pending), 0);
    zassert_ok(gpio_emul_input_set(GPIO0, 1, 0));
}

ZTEST_SUITE(device_bus, NULL, setup, NULL, NULL, NULL);
