/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's reference co-processor: firmware for a second MCU (mps3_an547, a Cortex-M55)
 * that serves the framed protocol of protocol.h on an interrupt-driven UART and runs int8
 * kernels on its own memory. It knows no model, as real hardware would not: weights
 * arrive by WRITE (once, at the main board's Init), and each RUN names a kernel and
 * carries its parameters and the addresses of its tensors in the device memory.
 *
 * Build-time settings:
 *   TVMDEV_COPROC_MEMORY_SIZE, TVMDEV_COPROC_MEMORY_ALIGN  the device memory (from the
 *                                device kind's declaration)
 *   TVMDEV_COPROC_USART          the CMSIS-Driver of the link (default Driver_USART1,
 *                                built with TVMDEV_UART1_INTERRUPTS)
 *   TVMDEV_COPROC_CMSIS_NN       run the kernels on CMSIS-NN (runtime/kernels/cmsis_nn)
 *                                instead of the portable ones
 * The console (UART0, polled) says what happens, line by line, for the tests to read.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "Driver_USART.h"
#include "protocol.h"
#include "semihosting.h"
#include "tvmk_s8.h"
#ifdef TVMDEV_COPROC_CMSIS_NN
#include "tvmk_cmsis_nn.h"
#define CONV2D_S8 tvmk_cmsis_nn_conv2d_s8
#define DEPTHWISE_CONV2D_S8 tvmk_cmsis_nn_depthwise_conv2d_s8
#define KERNELS "cmsis-nn"
#else
#define CONV2D_S8 tvmk_conv2d_s8
#define DEPTHWISE_CONV2D_S8 tvmk_depthwise_conv2d_s8
#define KERNELS "portable"
#endif

#ifndef TVMDEV_COPROC_MEMORY_SIZE
#error "define TVMDEV_COPROC_MEMORY_SIZE (the device kind's memory size)"
#endif
#ifndef TVMDEV_COPROC_MEMORY_ALIGN
#define TVMDEV_COPROC_MEMORY_ALIGN 16
#endif
#ifndef TVMDEV_COPROC_USART
#define TVMDEV_COPROC_USART Driver_USART1
#endif

extern ARM_DRIVER_USART Driver_USART0;
extern ARM_DRIVER_USART TVMDEV_COPROC_USART;

static uint8_t memory[TVMDEV_COPROC_MEMORY_SIZE]
    __attribute__((aligned(TVMDEV_COPROC_MEMORY_ALIGN)));

static volatile uint32_t link_events;
static uint8_t rx_byte;
static uint8_t tx_frame[TVMDEV_COPROC_MAX_FRAME];
static struct tvmdev_coproc_decoder decoder;
static uint32_t fault_kind, fault_arg;

static void link_event(uint32_t event)
{
    link_events |= event;
}

/* Sleep until the link signals event. Interrupts are masked around the test so that one
 * arriving between the test and WFI still wakes it. */
static void wait_event(uint32_t event)
{
    __asm__ volatile("cpsid i" ::: "memory");
    while ((link_events & event) == 0U) {
        __asm__ volatile("wfi\n\tcpsie i\n\tisb\n\tcpsid i" ::: "memory");
    }
    link_events &= ~event;
    __asm__ volatile("cpsie i" ::: "memory");
}

static void console(const char *text)
{
    (void)Driver_USART0.Send(text, (uint32_t)strlen(text));
}

static void console_u32(const char *label, uint32_t value)
{
    char text[40];
    char digits[11];
    int n = 0;
    size_t len = strlen(label);

    do {
        digits[n++] = (char)('0' + value % 10U);
        value /= 10U;
    } while (value != 0U);
    memcpy(text, label, len);
    while (n > 0) {
        text[len++] = digits[--n];
    }
    text[len++] = '\n';
    text[len] = '\0';
    console(text);
}

static void send_frame(uint8_t type, uint8_t seq, const void *head, uint32_t hn,
                       const void *tail, uint32_t tn)
{
    uint32_t n = tvmdev_coproc_encode(tx_frame, type, seq, head, hn, tail, tn);

    if (n == 0U) {
        return;
    }
    if (type == TVMDEV_COPROC_DONE && fault_kind == TVMDEV_COPROC_FAULT_BAD_CRC) {
        tx_frame[n - 1U] ^= 0x5AU;
        fault_kind = TVMDEV_COPROC_FAULT_NONE;
        console("coproc: fault bad-crc\n");
    }
    (void)TVMDEV_COPROC_USART.Send(tx_frame, n);
    wait_event(ARM_USART_EVENT_SEND_COMPLETE);
}

static void send_status(uint8_t type, uint8_t seq, int32_t status)
{
    uint8_t payload[4];

    tvmdev_coproc_put_u32(payload, (uint32_t)status);
    send_frame(type, seq, payload, 4U, NULL, 0U);
}

/* [addr, addr + n) lies in the device memory, addr aligned to align. */
static int in_memory(uint32_t addr, uint64_t n, uint32_t align)
{
    return addr <= TVMDEV_COPROC_MEMORY_SIZE && n <= TVMDEV_COPROC_MEMORY_SIZE - addr &&
           addr % align == 0U;
}

/* The late-answer fault waits on the host's clock (semihosting SYS_CLOCK, centiseconds):
 * an emulated timer runs at the emulator's pace, not the main board's. */
static void delay_ms(uint32_t ms)
{
    uint32_t t0 = tvmdev_semihosting_clock();

    while (tvmdev_semihosting_clock() - t0 < (ms + 9U) / 10U) {
    }
}

/* The bytes a tensor of a job spans (more than any memory when a dimension is
 * negative or the product overflows 32 bits). */
static uint64_t span(int32_t a, int32_t b, int32_t c, int32_t d)
{
    if (a < 0 || b < 0 || c < 0 || d < 0 || a > 0xFFFF || b > 0xFFFF || c > 0xFFFF ||
        d > 0xFFFF) {
        return UINT64_MAX;
    }
    return (uint64_t)a * (uint64_t)b * (uint64_t)c * (uint64_t)d;
}

/* Every tensor of the job lies in the device memory. */
static int job_in_memory(const struct tvmdev_coproc_job *j, int depthwise)
{
    int32_t out_ch = depthwise ? j->C * j->M_or_mult : j->M_or_mult;
    int32_t w_ch = depthwise ? out_ch : (j->group > 0 ? j->C / j->group : -1);
    int32_t w_n = depthwise ? 1 : out_ch;

    return in_memory(j->input, span(j->N, j->H, j->W, j->C), 1U) &&
           in_memory(j->weights, span(w_n, j->KH, j->KW, w_ch), 1U) &&
           (j->bias == TVMDEV_COPROC_NO_ADDR || in_memory(j->bias, span(out_ch, 4, 1, 1), 4U)) &&
           in_memory(j->output, span(j->N, j->OH, j->OW, out_ch), 1U) &&
           in_memory(j->scratch, j->scratch_bytes, 4U);
}

/* The job's requantization, one per output channel (RUN carries them). */
static int32_t multipliers[TVMDEV_COPROC_MAX_CHANNELS];
static int32_t shifts[TVMDEV_COPROC_MAX_CHANNELS];

static int32_t run_kernel(uint16_t kernel, const struct tvmdev_coproc_job *j)
{
    const int8_t *x = (const int8_t *)(memory + j->input);
    const int8_t *w = (const int8_t *)(memory + j->weights);
    const int32_t *b = j->bias == TVMDEV_COPROC_NO_ADDR ? NULL
                                                        : (const int32_t *)(memory + j->bias);
    int8_t *y = (int8_t *)(memory + j->output);
    /* The job's scratch is in the device memory: the main board's plan sized it for this
     * board's kernels too (tvmdev/plan/device_boards.py), so there is none of our own. */
    void *scratch = j->scratch_bytes ? (void *)(memory + j->scratch) : NULL;

    if (kernel == TVMDEV_COPROC_KERNEL_CONV2D_S8) {
        const struct tvmk_conv2d_s8_params params = {
            .N = j->N, .C = j->C, .H = j->H, .W = j->W, .KH = j->KH, .KW = j->KW,
            .OH = j->OH, .OW = j->OW, .stride_h = j->stride_h, .stride_w = j->stride_w,
            .pad_top = j->pad_top, .pad_left = j->pad_left, .dil_h = j->dil_h,
            .dil_w = j->dil_w, .M = j->M_or_mult, .group = j->group,
            .input_offset = j->input_offset, .output_offset = j->output_offset,
            .activation_min = j->activation_min, .activation_max = j->activation_max,
            .output_multiplier = multipliers, .output_shift = shifts,
            .scratch_bytes = (int32_t)j->scratch_bytes, .scratch = scratch};

        return CONV2D_S8(x, w, b, y, &params, NULL);
    } else {
        const struct tvmk_depthwise_conv2d_s8_params params = {
            j->N, j->C, j->H, j->W, j->KH, j->KW, j->OH, j->OW, j->stride_h, j->stride_w,
            j->pad_top, j->pad_left, j->dil_h, j->dil_w, j->M_or_mult,
            j->input_offset, j->output_offset, j->activation_min, j->activation_max,
            multipliers, shifts,
            (int32_t)j->scratch_bytes, scratch};

        return DEPTHWISE_CONV2D_S8(x, w, b, y, &params, NULL);
    }
}

/* SysTick's current value, counting down, as a cycle counter for DONE. */
static uint32_t cycles_now(void)
{
    return *(volatile uint32_t *)0xE000E018U;
}

static void run_job(const struct tvmdev_coproc_frame *f)
{
    struct tvmdev_coproc_job job;
    uint16_t kernel = 0U;
    uint8_t done[8];
    int32_t status;
    uint32_t t0;

    int32_t channels = tvmdev_coproc_job_decode(f->payload, f->length, &kernel, &job,
                                                multipliers, shifts);

    if (channels < 0) {
        send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_FRAME);
        return;
    }
    if (kernel != TVMDEV_COPROC_KERNEL_CONV2D_S8 &&
        kernel != TVMDEV_COPROC_KERNEL_DEPTHWISE_CONV2D_S8) {
        send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_KERNEL);
        return;
    }
    if (!job_in_memory(&job, kernel == TVMDEV_COPROC_KERNEL_DEPTHWISE_CONV2D_S8) ||
        channels != (kernel == TVMDEV_COPROC_KERNEL_CONV2D_S8 ? job.M_or_mult
                                                               : job.C * job.M_or_mult)) {
        send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_ADDRESS);
        return;
    }
    if (fault_kind == TVMDEV_COPROC_FAULT_DIE) {
        console("coproc: fault die\n");
        tvmdev_semihosting_exit(3);
    }
    t0 = cycles_now();
    status = run_kernel(kernel, &job);
    console_u32(status < 0 ? "coproc: kernel failed, status -" : "coproc: ran kernel ",
                status < 0 ? (uint32_t)-status : kernel);
    tvmdev_coproc_put_u32(done, (uint32_t)(status < 0 ? TVMDEV_COPROC_E_KERNEL_FAILED : 0));
    tvmdev_coproc_put_u32(done + 4, (t0 - cycles_now()) & 0xFFFFFFU);
    if (fault_kind == TVMDEV_COPROC_FAULT_DELAY) {
        console("coproc: fault delay\n");
        fault_kind = TVMDEV_COPROC_FAULT_NONE;
        delay_ms(fault_arg);
    }
    send_frame(TVMDEV_COPROC_DONE, f->seq, done, sizeof done, NULL, 0U);
}

static uint32_t epoch;

static void send_hello(uint8_t seq)
{
    uint8_t hello[15];

    tvmdev_coproc_put_u32(hello, TVMDEV_COPROC_MEMORY_SIZE);
    tvmdev_coproc_put_u32(hello + 4, TVMDEV_COPROC_MEMORY_ALIGN);
    tvmdev_coproc_put_u32(hello + 8, epoch);
    hello[12] = (uint8_t)TVMDEV_COPROC_MAX_PAYLOAD;
    hello[13] = (uint8_t)(TVMDEV_COPROC_MAX_PAYLOAD >> 8);
    hello[14] = TVMDEV_COPROC_VERSION;
    send_frame(TVMDEV_COPROC_HELLO, seq, hello, sizeof hello, NULL, 0U);
}

static void serve(const struct tvmdev_coproc_frame *f)
{
    const uint8_t *p = f->payload;

    switch (f->type) {
    case TVMDEV_COPROC_WRITE: {
        uint32_t addr = f->length >= 4U ? tvmdev_coproc_get_u32(p) : 0U;
        uint32_t n = f->length >= 4U ? f->length - 4U : 0U;

        if (f->length < 4U || !in_memory(addr, n, 1U)) {
            send_status(TVMDEV_COPROC_STATUS, f->seq, TVMDEV_COPROC_E_ADDRESS);
            return;
        }
        memcpy(memory + addr, p + 4, n);
        send_status(TVMDEV_COPROC_STATUS, f->seq, 0);
        return;
    }
    case TVMDEV_COPROC_READ: {
        uint32_t addr = f->length == 8U ? tvmdev_coproc_get_u32(p) : 0U;
        uint32_t n = f->length == 8U ? tvmdev_coproc_get_u32(p + 4) : 0U;

        if (f->length != 8U || n > TVMDEV_COPROC_MAX_PAYLOAD || !in_memory(addr, n, 1U)) {
            send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_ADDRESS);
            return;
        }
        send_frame(TVMDEV_COPROC_DATA, f->seq, memory + addr, n, NULL, 0U);
        return;
    }
    case TVMDEV_COPROC_HELLO:
        send_hello(f->seq);
        return;
    case TVMDEV_COPROC_RUN:
        run_job(f);
        return;
    case TVMDEV_COPROC_DEBUG:
        if (f->length != 5U) {
            send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_FRAME);
            return;
        }
        fault_kind = p[0];
        fault_arg = tvmdev_coproc_get_u32(p + 1);
        send_status(TVMDEV_COPROC_STATUS, f->seq, 0);
        return;
    default:
        send_status(TVMDEV_COPROC_ERROR, f->seq, TVMDEV_COPROC_E_TYPE);
        return;
    }
}

/* The epoch of this boot: what the launcher passed on the command line (-append), else
 * the host's time; it only has to differ from the previous boot's. */
static uint32_t boot_epoch(void)
{
    char cmdline[64];
    uint32_t epoch = 0U;
    const char *c;

    if (tvmdev_semihosting_cmdline(cmdline, sizeof cmdline) == 0) {
        for (c = strrchr(cmdline, ' ') != NULL ? strrchr(cmdline, ' ') + 1 : cmdline;
             *c >= '0' && *c <= '9'; c++) {
            epoch = epoch * 10U + (uint32_t)(*c - '0');
        }
    }
    return epoch != 0U ? epoch : tvmdev_semihosting_time();
}

int main(void)
{
    struct tvmdev_coproc_frame frame;

    (void)Driver_USART0.Initialize(NULL);
    (void)Driver_USART0.PowerControl(ARM_POWER_FULL);
    (void)TVMDEV_COPROC_USART.Initialize(link_event);
    (void)TVMDEV_COPROC_USART.PowerControl(ARM_POWER_FULL);
    tvmdev_coproc_decoder_reset(&decoder);
    console("coproc: kernels " KERNELS "\n");
    epoch = boot_epoch();
    console_u32("coproc: epoch ", epoch);
    /* Said on boot for a main board already listening (a restart); a main board that
     * connects later asks with HELLO. */
    send_hello(0U);
    console("coproc: ready\n");
    for (;;) {
        int32_t r;

        (void)TVMDEV_COPROC_USART.Receive(&rx_byte, 1U);
        wait_event(ARM_USART_EVENT_RECEIVE_COMPLETE);
        r = tvmdev_coproc_feed(&decoder, rx_byte, &frame);
        if (r == TVMDEV_COPROC_FRAME) {
            serve(&frame);
        } else if (r == TVMDEV_COPROC_BAD) {
            console("coproc: dropped a bad frame\n");
        }
    }
}
