/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <time.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_TIME_H
#define TVMDEV_FAKE_TIME_H
typedef long time_t;
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define CLOCK_REALTIME 0
int clock_gettime(int clock, struct timespec *ts);
#endif
