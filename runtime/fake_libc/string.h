/* Minimal fake <string.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STRING_H
#define TVMDEV_FAKE_STRING_H
#include <stddef.h>
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
#endif
