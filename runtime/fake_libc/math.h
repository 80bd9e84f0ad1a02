/* Minimal fake <math.h> for parsing generated C with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_MATH_H
#define TVMDEV_FAKE_MATH_H
float expf(float x);
float tanhf(float x);
float fmaf(float x, float y, float z);
#define HUGE_VALF (1e30f * 1e30f)
#endif
