/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <unistd.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_UNISTD_H
#define TVMDEV_FAKE_UNISTD_H
#include <stddef.h>
typedef long ssize_t;
typedef unsigned int useconds_t;
ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);
int close(int fd);
int usleep(useconds_t usec);
unsigned int sleep(unsigned int seconds);
#endif
