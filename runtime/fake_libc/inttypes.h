/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <inttypes.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_INTTYPES_H
#define TVMDEV_FAKE_INTTYPES_H
#include <stdint.h>
#define PRId8 "d"
#define PRId16 "d"
#define PRId32 "d"
#define PRId64 "lld"
#define PRIu8 "u"
#define PRIu16 "u"
#define PRIu32 "u"
#define PRIu64 "llu"
#define PRIx8 "x"
#define PRIx16 "x"
#define PRIx32 "x"
#define PRIx64 "llx"
#define PRIX32 "X"
#define PRIX64 "llX"
#define PRIiPTR "ld"
#define PRIuPTR "lu"
#define PRIxPTR "lx"
#endif
