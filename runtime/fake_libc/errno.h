/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <errno.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_ERRNO_H
#define TVMDEV_FAKE_ERRNO_H
#define EPERM 1
#define ENOENT 2
#define EIO 5
#define EAGAIN 11
#define EBUSY 16
#define ENODEV 19
#define EINVAL 22
#define EDEADLK 35
#define ENOSYS 38
#define ETIMEDOUT 110
#define ENOTSUP 134
extern int errno;
#endif
