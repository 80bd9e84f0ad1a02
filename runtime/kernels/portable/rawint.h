/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels on raw integers: conversions with C's modular results spelt
 * out (no implementation-defined narrowing), shared by rawint_*.c and signal_*.c.
 * Private to this folder.
 */
#ifndef TVMK_PORTABLE_RAWINT_H_
#define TVMK_PORTABLE_RAWINT_H_

#include <stddef.h>

#include "tvmk_rawint.h"

/* v modulo 2^32 as int32. */
static inline int32_t tvmk_s32(uint32_t v)
{
    return v >= 0x80000000u ? (int32_t)(v - 0x80000000u) - INT32_MAX - 1 : (int32_t)v;
}

/* v modulo 2^16 as int16. */
static inline int16_t tvmk_s16(int32_t v)
{
    uint32_t u = (uint32_t)v & 0xFFFFu;
    return (int16_t)(u >= 0x8000u ? (int32_t)u - 0x10000 : (int32_t)u);
}

/* v modulo 2^8 as int8. */
static inline int8_t tvmk_s8_wrap(int32_t v)
{
    uint32_t u = (uint32_t)v & 0xFFu;
    return (int8_t)(u >= 0x80u ? (int32_t)u - 0x100 : (int32_t)u);
}

/* The number of bits of x (0 for 0). */
static inline int32_t tvmk_bit_length(uint64_t x)
{
    int32_t n = 0;

    while (x != 0) {
        x >>= 1;
        ++n;
    }
    return n;
}

#endif /* TVMK_PORTABLE_RAWINT_H_ */
