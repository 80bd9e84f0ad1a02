/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <stdbool.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STDBOOL_H
#define TVMDEV_FAKE_STDBOOL_H
#define bool _Bool
#define true 1
#define false 0
#endif
