/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <pthread.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_PTHREAD_H
#define TVMDEV_FAKE_PTHREAD_H
#include <time.h>
typedef struct { long opaque[5]; } pthread_mutex_t;
typedef struct { int opaque; } pthread_mutexattr_t;
typedef struct { long opaque[6]; } pthread_cond_t;
typedef struct { int opaque; } pthread_condattr_t;
typedef unsigned long pthread_t;
#define PTHREAD_MUTEX_ERRORCHECK 2
#define PTHREAD_MUTEX_INITIALIZER {{0, 0, 0, 0, 0}}
int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int pthread_mutex_destroy(pthread_mutex_t *m);
int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_mutexattr_init(pthread_mutexattr_t *a);
int pthread_mutexattr_destroy(pthread_mutexattr_t *a);
int pthread_mutexattr_settype(pthread_mutexattr_t *a, int type);
int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int pthread_cond_destroy(pthread_cond_t *c);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int pthread_cond_broadcast(pthread_cond_t *c);
#endif
