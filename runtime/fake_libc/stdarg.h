/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <stdarg.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_STDARG_H
#define TVMDEV_FAKE_STDARG_H
typedef char *va_list;
#define va_start(ap, last) ((void)(ap))
#define va_arg(ap, type) (*(type *)(ap))
#define va_end(ap) ((void)(ap))
#define va_copy(dst, src) ((void)((dst) = (src)))
#endif
