/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <stdint.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STDINT_H
#define TVMDEV_FAKE_STDINT_H
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#endif
