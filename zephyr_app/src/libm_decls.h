/*
 * Zephyr's minimal libc has a math.h without the float functions the portable kernels
 * call; with newlib's libm linked in (see CMakeLists.txt), these are their prototypes.
 * Force-included into the application's sources on such builds.
 */
#ifndef TVMDEV_LIBM_DECLS_H_
#define TVMDEV_LIBM_DECLS_H_

float expf(float x);
float tanhf(float x);
float fmaf(float x, float y, float z);
float roundf(float x);
float fabsf(float x);
float fminf(float x, float y);
float fmaxf(float x, float y);

#ifndef HUGE_VALF
#define HUGE_VALF __builtin_huge_valf()
#endif

#endif /* TVMDEV_LIBM_DECLS_H_ */
