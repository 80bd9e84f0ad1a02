/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <zephyr/logging/log.h> for parsing generated C with pycparser. */
#ifndef TVMDEV_FAKE_ZEPHYR_LOG_H
#define TVMDEV_FAKE_ZEPHYR_LOG_H
void tvmdev_fake_log(const char *fmt, ...);
#define LOG_MODULE_REGISTER(name, level) extern int tvmdev_fake_log_module_##name
#define LOG_ERR(...) tvmdev_fake_log(__VA_ARGS__)
#define LOG_WRN(...) tvmdev_fake_log(__VA_ARGS__)
#define LOG_INF(...) tvmdev_fake_log(__VA_ARGS__)
#define LOG_DBG(...) tvmdev_fake_log(__VA_ARGS__)
#endif
