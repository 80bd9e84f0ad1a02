/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/pm/device.h> for parsing generated C with pycparser. */
#ifndef TVMDEV_FAKE_ZEPHYR_PM_DEVICE_H
#define TVMDEV_FAKE_ZEPHYR_PM_DEVICE_H
struct device;
enum pm_device_action {
    PM_DEVICE_ACTION_SUSPEND,
    PM_DEVICE_ACTION_RESUME,
    PM_DEVICE_ACTION_TURN_OFF,
    PM_DEVICE_ACTION_TURN_ON
};
#define PM_DEVICE_DT_INST_DEFINE(idx, pm_action_cb)                                       \
    int (*const tvmdev_fake_pm_action_##idx)(const struct device *,                       \
                                             enum pm_device_action) = pm_action_cb;
#define PM_DEVICE_DT_INST_GET(idx) ((void *)0)
#endif
