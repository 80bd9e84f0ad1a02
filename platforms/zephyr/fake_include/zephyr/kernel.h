/* Minimal fake <zephyr/kernel.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_ZEPHYR_KERNEL_H
#define TVMDEV_FAKE_ZEPHYR_KERNEL_H
#include <stdint.h>
#include <stddef.h>
typedef struct {
    int64_t ticks;
} k_timeout_t;
struct k_mutex {
    void *owner;
    uint32_t lock_count;
    int owner_orig_prio;
};
k_timeout_t tvmdev_fake_k_msec(int32_t ms);
k_timeout_t tvmdev_fake_k_forever(void);
#define K_MSEC(ms) tvmdev_fake_k_msec(ms)
#define K_FOREVER tvmdev_fake_k_forever()
#define K_NO_WAIT tvmdev_fake_k_msec(0)
int k_mutex_init(struct k_mutex *mutex);
int k_mutex_lock(struct k_mutex *mutex, k_timeout_t timeout);
int k_mutex_unlock(struct k_mutex *mutex);
#endif
