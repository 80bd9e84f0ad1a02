/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <stddef.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STDDEF_H
#define TVMDEV_FAKE_STDDEF_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
#define NULL ((void *)0)
#define offsetof(t, m) ((size_t)&(((t *)0)->m))
#endif
