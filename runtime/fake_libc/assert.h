/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <assert.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_ASSERT_H
#define TVMDEV_FAKE_ASSERT_H
#define assert(expr) ((void)(expr))
#define static_assert(expr, msg) typedef int tvmdev_fake_static_assert
#endif
