/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm semihosting, the two calls tvmdev's firmware needs: end the run with a status
 * code (SYS_EXIT_EXTENDED, which QEMU turns into its exit status) and write a string
 * to the debugger's console (SYS_WRITE0).
 */
#ifndef TVMDEV_SEMIHOSTING_H_
#define TVMDEV_SEMIHOSTING_H_

#include <stdint.h>

void tvmdev_semihosting_write0(const char *text);
void tvmdev_semihosting_exit(int32_t status) __attribute__((noreturn));

#endif /* TVMDEV_SEMIHOSTING_H_ */
