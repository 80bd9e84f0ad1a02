/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm semihosting, the calls tvmdev's firmware needs: end the run with a status
 * code (SYS_EXIT_EXTENDED, which QEMU turns into its exit status) and write a string
 * to the debugger's console (SYS_WRITE0); and for the co-processor firmware, its command
 * line (SYS_GET_CMDLINE: QEMU's -kernel and -append) and the host's time (SYS_TIME,
 * SYS_CLOCK).
 */
#ifndef TVMDEV_SEMIHOSTING_H_
#define TVMDEV_SEMIHOSTING_H_

#include <stdint.h>

void tvmdev_semihosting_write0(const char *text);
void tvmdev_semihosting_exit(int32_t status) __attribute__((noreturn));
/* The command line, NUL-terminated, into buf (n bytes); 0, or -1 when it does not fit. */
int32_t tvmdev_semihosting_cmdline(char *buf, uint32_t n);
/* Seconds since 1970 on the host. */
uint32_t tvmdev_semihosting_time(void);
/* Centiseconds since the program started, on the host's clock. */
uint32_t tvmdev_semihosting_clock(void);

#endif /* TVMDEV_SEMIHOSTING_H_ */
