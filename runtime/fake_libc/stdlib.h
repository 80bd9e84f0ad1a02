/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <stdlib.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STDLIB_H
#define TVMDEV_FAKE_STDLIB_H
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
typedef struct { int quot; int rem; } div_t;
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *ptr, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
void free(void *ptr);
void abort(void);
void exit(int status);
int atexit(void (*fn)(void));
char *getenv(const char *name);
int atoi(const char *s);
long atol(const char *s);
long strtol(const char *s, char **end, int base);
unsigned long strtoul(const char *s, char **end, int base);
long long strtoll(const char *s, char **end, int base);
unsigned long long strtoull(const char *s, char **end, int base);
float strtof(const char *s, char **end);
double strtod(const char *s, char **end);
int abs(int x);
long labs(long x);
div_t div(int a, int b);
int rand(void);
void srand(unsigned int seed);
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void *bsearch(const void *key, const void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *));
#endif
