/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <math.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_MATH_H
#define TVMDEV_FAKE_MATH_H
float expf(float x);
float tanhf(float x);
float fmaf(float x, float y, float z);
float fabsf(float x);
float sqrtf(float x);
float logf(float x);
float powf(float x, float y);
float floorf(float x);
float ceilf(float x);
float roundf(float x);
float fmaxf(float x, float y);
float fminf(float x, float y);
double fabs(double x);
double sqrt(double x);
double exp(double x);
double log(double x);
double pow(double x, double y);
double floor(double x);
double ceil(double x);
#define INFINITY HUGE_VALF
#define NAN (0.0f / 0.0f)
#define isnan(x) ((x) != (x))
#define isinf(x) (!isnan(x) && isnan((x) - (x)))
#define isfinite(x) (!isnan((x) - (x)))
#define HUGE_VALF (1e30f * 1e30f)
#endif
