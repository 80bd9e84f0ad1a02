/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The checks of the device tests in tests/c: each failed one prints where and what, and
 * counts; main prints the count last and fails when it is not 0. Include it after the
 * device header (it names the statuses with TVMDeviceStatusName).
 */
#ifndef TVMDEV_TESTS_EXPECT_H_
#define TVMDEV_TESTS_EXPECT_H_

#include <stdio.h>

static int failures;

/* call returns the status want. */
#define EXPECT(call, want)                                                             \
    do {                                                                               \
        int32_t got_ = (call);                                                         \
        if (got_ != (want)) {                                                          \
            printf("%s:%d: %s = %s, want %s\n", __FILE__, __LINE__, #call,             \
                   TVMDeviceStatusName(got_), TVMDeviceStatusName(want));              \
            failures++;                                                                \
        }                                                                              \
    } while (0)

/* cond holds. */
#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            printf("%s:%d: %s is false\n", __FILE__, __LINE__, #cond);                 \
            failures++;                                                                \
        }                                                                              \
    } while (0)

#endif /* TVMDEV_TESTS_EXPECT_H_ */
