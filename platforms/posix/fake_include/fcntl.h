/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <fcntl.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_FCNTL_H
#define TVMDEV_FAKE_FCNTL_H
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_NONBLOCK 04000
#define O_NOCTTY 0400
int open(const char *path, int flags, ...);
#endif
