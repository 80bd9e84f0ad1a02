/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/devicetree.h> for parsing generated C with pycparser. */
#ifndef TVMDEV_FAKE_ZEPHYR_DEVICETREE_H
#define TVMDEV_FAKE_ZEPHYR_DEVICETREE_H
#define DT_INST_FOREACH_STATUS_OKAY(fn) fn(0)
#endif
