/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/cache.h> for parsing generated C with pycparser. */
#ifndef TVMDEV_FAKE_ZEPHYR_CACHE_H
#define TVMDEV_FAKE_ZEPHYR_CACHE_H
#include <stddef.h>
int sys_cache_data_flush_range(void *addr, size_t size);
int sys_cache_data_invd_range(void *addr, size_t size);
#endif
