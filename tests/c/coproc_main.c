/*
 * The main board's side of the co-processor test (tests/test_coproc.py), on mps2_an386
 * under RTX5: examples/uart_npu's driver, called as tvmdev's executor calls a device with
 * memory (docs/device-memory.md of the devmem work): the constants are copied once, then
 * each run copies its input in, runs the layers of coproc_case.h on the co-processor one
 * after the other (their intermediates stay in its memory), waits for each, and copies
 * the last output back. Every Open has its Close; any error marks the device not loaded,
 * so the next run reloads its constants.
 *
 * SCENARIO (coproc_case.h): after its good runs, the test arms a fault of the co-processor
 * (a corrupted answer, a late answer, an answer it never sends because the test kills it)
 * and runs once more (which must fail with the fault's code), then runs again (which must
 * succeed). The console (UART0) carries one line per event and each output in hex.
 */
#include <stdint.h>
#include <string.h>

#include "cmsis_os2.h"
#ifdef CASE_CMSIS_NN /* the main board's own kernels, for the run without offload */
#include "tvmk_cmsis_nn.h"
#define CASE_LOCAL_CONV2D tvmk_cmsis_nn_conv2d_s8
#define CASE_LOCAL_DEPTHWISE_CONV2D tvmk_cmsis_nn_depthwise_conv2d_s8
#else
#include "tvmk_s8.h"
#define CASE_LOCAL_CONV2D tvmk_conv2d_s8
#define CASE_LOCAL_DEPTHWISE_CONV2D tvmk_depthwise_conv2d_s8
#endif
#include "coproc_case.h"
#include "semihosting.h"
#include "uart_npu_link.h"

extern ARM_DRIVER_USART Driver_USART0;
extern ARM_DRIVER_USART Driver_USART1;

static tvm_device_uart_npu_t npu;
static int loaded;
static uint32_t opens, closes;
static int8_t output[CASE_OUTPUT_BYTES];

static void put(const char *text)
{
    (void)Driver_USART0.Send(text, (uint32_t)strlen(text));
}

static void put_u32(uint32_t value)
{
    char text[11];
    int i = 10;

    text[i] = '\0';
    do {
        text[--i] = (char)('0' + value % 10U);
        value /= 10U;
    } while (value != 0U);
    put(&text[i]);
}

static void put_status(const char *what, int32_t status)
{
    put(what);
    put(" ");
    put(TVMDeviceStatusName(status));
    put("\n");
}

/* The output as "tvmdev: data" lines of 32 hex bytes. */
static void put_output(uint32_t run)
{
    static const char hex[] = "0123456789abcdef";
    char line[12 + 32 * 3 + 2]; /* "tvmdev: data", 32 " xx", "\n", NUL */
    uint32_t i, n = 0U;

    put("tvmdev: output run");
    put_u32(run);
    put(" 0\n");
    for (i = 0U; i < CASE_OUTPUT_BYTES; i++) {
        if (n == 0U) {
            memcpy(line, "tvmdev: data", 12);
            n = 12U;
        }
        line[n++] = ' ';
        line[n++] = hex[(uint8_t)output[i] >> 4];
        line[n++] = hex[(uint8_t)output[i] & 15U];
        if (i % 32U == 31U || i + 1U == CASE_OUTPUT_BYTES) {
            line[n++] = '\n';
            line[n] = '\0';
            put(line);
            n = 0U;
        }
    }
}

/* A call that may return PENDING, then its Wait: the executor's pattern. */
static int32_t settle(int32_t status, uint32_t timeout_ms)
{
    if (status == TVM_DEVICE_PENDING) {
        return TVMDeviceUartNpuWait(&npu, timeout_ms);
    }
    return status;
}

static int32_t load_constants(void)
{
    int32_t status = TVM_DEVICE_OK;
    uint32_t i;

    for (i = 0U; i < CASE_CONSTANTS && status == TVM_DEVICE_OK; i++) {
        status = settle(TVMDeviceUartNpuCopyTo(&npu, case_constants[i].addr,
                                               case_constants[i].data, case_constants[i].bytes),
                        CASE_WAIT_MS);
    }
    return status;
}

/* One inference: input in, the layers, output out. */
static int32_t run_once(const int8_t *input)
{
    int32_t status = TVMDeviceUartNpuOpen(&npu);
    int32_t closed;
    uint32_t i;

    if (status != TVM_DEVICE_OK) {
        loaded = 0;
        return status;
    }
    opens++;
    if (!loaded) {
        status = load_constants();
        loaded = status == TVM_DEVICE_OK;
    }
    if (status == TVM_DEVICE_OK) {
        status = settle(TVMDeviceUartNpuCopyTo(&npu, CASE_INPUT_ADDR, input, CASE_INPUT_BYTES),
                        CASE_WAIT_MS);
    }
    for (i = 0U; i < CASE_LAYERS && status == TVM_DEVICE_OK; i++) {
        status = settle(case_layer(i, &npu), CASE_WAIT_MS);
    }
    if (status == TVM_DEVICE_OK) {
        status = settle(TVMDeviceUartNpuCopyFrom(&npu, output, CASE_OUTPUT_ADDR,
                                                 CASE_OUTPUT_BYTES), CASE_WAIT_MS);
    } else {
        (void)TVMDeviceUartNpuWait(&npu, CASE_WAIT_MS); /* nothing left in flight */
    }
    if (status != TVM_DEVICE_OK) {
        loaded = 0;
    }
    closed = TVMDeviceUartNpuClose(&npu);
    if (closed == TVM_DEVICE_OK) {
        closes++;
    }
    return status != TVM_DEVICE_OK ? status : closed;
}

/* The layers on the main board itself, from the same input: the figure to compare. */
static void run_local(void)
{
    static int8_t act[2][CASE_ACT_BYTES] __attribute__((aligned(16)));
    static uint8_t scratch[CASE_SCRATCH_BYTES] __attribute__((aligned(16)));
    uint32_t t0 = osKernelGetTickCount();
    int32_t status = TVM_DEVICE_OK;
    uint32_t i;

    memcpy(act[0], case_inputs[0], CASE_INPUT_BYTES);
    for (i = 0U; i < CASE_LAYERS && status == TVM_DEVICE_OK; i++) {
        status = case_layer_local(i, act[i % 2U], act[(i + 1U) % 2U], scratch);
    }
    put("local ticks=");
    put_u32(osKernelGetTickCount() - t0);
    put_status("", status);
    memcpy(output, act[CASE_LAYERS % 2U], CASE_OUTPUT_BYTES);
    put_output(99U);
}

static void report_bus(const char *what, const struct uart_npu_stats *a,
                       const struct uart_npu_stats *b)
{
    put("bus ");
    put(what);
    put(" to_device=");
    put_u32(b->bytes_to_device - a->bytes_to_device);
    put(" from_device=");
    put_u32(b->bytes_from_device - a->bytes_from_device);
    put("\n");
}

static void app(void *arg)
{
    struct uart_npu_stats before, after;
    uint32_t run = 0U, i;
    int32_t status;

    (void)arg;
    status = TVMDeviceUartNpuInit(&npu, &Driver_USART1);
    put_status("init", status);
    if (status != TVM_DEVICE_OK) {
        tvmdev_semihosting_exit(1);
    }
    put_status("activate", TVMDeviceUartNpuActivate(&npu));
    for (i = 0U; i < CASE_RUNS; i++, run++) {
        uint32_t t0 = osKernelGetTickCount();

        uart_npu_stats(&before);
        status = run_once(case_inputs[i % CASE_INPUTS]);
        uart_npu_stats(&after);
        put("run");
        put_u32(run);
        put(" ticks=");
        put_u32(osKernelGetTickCount() - t0);
        put_status("", status);
        report_bus(i == 0U ? "first" : "steady", &before, &after);
        if (status == TVM_DEVICE_OK) {
            put_output(run);
        }
    }
    run_local();
#if CASE_FAULT != 0
    put_status("arm fault", uart_npu_debug_fault(&npu, CASE_FAULT, CASE_FAULT_ARG));
    status = run_once(case_inputs[0]);
    put("faulted run");
    put_status("", status);
    /* The co-processor may be rebooting (the test restarts it): retry the next run a
     * few times, as an application would after an error. */
    for (i = 0U; i < 10U; i++) {
        status = run_once(case_inputs[0]);
        put("recovery run");
        put_status("", status);
        if (status == TVM_DEVICE_OK) {
            break;
        }
        (void)osDelay(100U);
    }
    if (status == TVM_DEVICE_OK) {
        put_output(run++);
    }
#endif
    put_status("deactivate", TVMDeviceUartNpuDeactivate(&npu));
    put_status("destroy", TVMDeviceUartNpuDestroy(&npu));
    uart_npu_stats(&after);
    put("opens=");
    put_u32(opens);
    put(" closes=");
    put_u32(closes);
    put(" bad_frames=");
    put_u32(after.bad_frames);
    put(" stale_frames=");
    put_u32(after.stale_frames);
    put("\ntvmdev: end\n");
    tvmdev_semihosting_exit(0);
}

int main(void)
{
    static const osThreadAttr_t attr = {"app", 0U, NULL, 0U, NULL, 8192U, osPriorityNormal, 0U, 0U};

    (void)Driver_USART0.Initialize(NULL);
    (void)Driver_USART0.PowerControl(ARM_POWER_FULL);
    if (osKernelInitialize() != osOK || osThreadNew(app, NULL, &attr) == NULL) {
        put("kernel start failed\n");
        return 1;
    }
    (void)osKernelStart();
    return 1;
}
