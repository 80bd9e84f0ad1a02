/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/device.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_ZEPHYR_DEVICE_H
#define TVMDEV_FAKE_ZEPHYR_DEVICE_H
#include <stdbool.h>
#include <stdint.h>
struct device {
    const char *name;
    const void *config;
    void *data;
    const void *api;
};
bool device_is_ready(const struct device *dev);
#define DEVICE_DT_INST_DEFINE(inst, init_fn, pm, data_ptr, config_ptr, level, prio, api) \
    const struct device tvmdev_fake_device_##inst = {"inst", config_ptr, data_ptr, api};   \
    int (*const tvmdev_fake_init_##inst)(const struct device *) = init_fn;
#endif
