/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm semihosting on M-profile: BKPT 0xAB with the operation in r0 and its parameter
 * in r1. QEMU serves it with -semihosting-config enable=on,target=native.
 */
#include "semihosting.h"

#define SYS_WRITE0 0x04U
#define SYS_CLOCK 0x10U
#define SYS_TIME 0x11U
#define SYS_GET_CMDLINE 0x15U
#define SYS_EXIT_EXTENDED 0x20U
#define ADP_STOPPED_APPLICATION_EXIT 0x20026U

static uint32_t semihosting_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;

    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void tvmdev_semihosting_write0(const char *text)
{
    (void)semihosting_call(SYS_WRITE0, text);
}

void tvmdev_semihosting_exit(int32_t status)
{
    static uint32_t block[2];

    block[0] = ADP_STOPPED_APPLICATION_EXIT;
    block[1] = (uint32_t)status;
    (void)semihosting_call(SYS_EXIT_EXTENDED, block);
    for (;;) {
        /* Not under a debugger: stop here. */
    }
}

int32_t tvmdev_semihosting_cmdline(char *buf, uint32_t n)
{
    uint32_t block[2];

    block[0] = (uint32_t)(uintptr_t)buf;
    block[1] = n;
    return semihosting_call(SYS_GET_CMDLINE, block) == 0U ? 0 : -1;
}

uint32_t tvmdev_semihosting_time(void)
{
    return semihosting_call(SYS_TIME, 0);
}

uint32_t tvmdev_semihosting_clock(void)
{
    return semihosting_call(SYS_CLOCK, 0);
}
