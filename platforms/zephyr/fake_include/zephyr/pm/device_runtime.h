/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/pm/device_runtime.h> for parsing generated C with pycparser. */
#ifndef TVMDEV_FAKE_ZEPHYR_PM_DEVICE_RUNTIME_H
#define TVMDEV_FAKE_ZEPHYR_PM_DEVICE_RUNTIME_H
struct device;
int pm_device_runtime_get(const struct device *dev);
int pm_device_runtime_put(const struct device *dev);
int pm_device_runtime_enable(const struct device *dev);
#endif
