/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/kernel.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_ZEPHYR_KERNEL_H
#define TVMDEV_FAKE_ZEPHYR_KERNEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef struct {
    int64_t ticks;
} k_timeout_t;
/* Opaque here: generated code uses the k_mutex API only, never its members. */
struct k_mutex {
    int tvmdev_fake_opaque;
};
struct k_thread;
typedef struct k_thread *k_tid_t;
typedef long atomic_t;
typedef atomic_t atomic_val_t;
k_timeout_t tvmdev_fake_k_msec(int32_t ms);
k_timeout_t tvmdev_fake_k_forever(void);
#define K_MSEC(ms) tvmdev_fake_k_msec(ms)
#define K_FOREVER tvmdev_fake_k_forever()
#define K_NO_WAIT tvmdev_fake_k_msec(0)
int k_mutex_init(struct k_mutex *mutex);
int k_mutex_lock(struct k_mutex *mutex, k_timeout_t timeout);
int k_mutex_unlock(struct k_mutex *mutex);
k_tid_t k_current_get(void);
atomic_val_t atomic_get(const atomic_t *target);
atomic_val_t atomic_set(atomic_t *target, atomic_val_t value);
atomic_val_t atomic_inc(atomic_t *target);
bool atomic_cas(atomic_t *target, atomic_val_t old_value, atomic_val_t new_value);
#endif
