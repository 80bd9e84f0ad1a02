/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <float.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_FLOAT_H
#define TVMDEV_FAKE_FLOAT_H
#define FLT_MAX 3.40282347e+38F
#define FLT_MIN 1.17549435e-38F
#define FLT_EPSILON 1.19209290e-07F
#define FLT_MANT_DIG 24
#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#endif
