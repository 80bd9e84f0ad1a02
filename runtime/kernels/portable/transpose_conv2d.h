/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: what the transposed-convolution kernels share
 * (transpose_conv2d.c, transpose_conv2d_s8.c, transpose_conv2d_s16.c). Private to this
 * folder. Input row iy and filter row ky reach output row iy * stride - pad + ky * dil;
 * the kernels compute each output value once, over the (iy, ky) that reach it, so they
 * need no accumulator. (The int8 and int16 kernels' body: TVMK_TCONV_INT, conv_int.h.)
 */
#ifndef TVMK_PORTABLE_TRANSPOSE_CONV2D_H_
#define TVMK_PORTABLE_TRANSPOSE_CONV2D_H_

#include <stdint.h>

/* The input row (or column) that filter row k brings onto output row o, or -1. */
static inline int32_t tvmk_tconv_source(int32_t o, int32_t k, int32_t stride, int32_t pad,
                                        int32_t dil, int32_t size)
{
    const int32_t t = o + pad - k * dil;

    if (t < 0 || t % stride != 0 || t / stride >= size) {
        return -1;
    }
    return t / stride;
}

#endif /* TVMK_PORTABLE_TRANSPOSE_CONV2D_H_ */
