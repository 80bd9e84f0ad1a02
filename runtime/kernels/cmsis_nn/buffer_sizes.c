/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's probe of CMSIS-NN's scratch sizes, compiled for the host against a CMSIS-NN
 * tree and run at generation time: the memory planner gives each operator exactly what
 * CMSIS-NN's own *_get_buffer_size* functions say, for the target's architecture, without
 * tvmdev restating their formulas.
 *
 * Built for the host, the plain functions are CMSIS-NN's pure C answers (neither
 * ARM_MATH_DSP nor ARM_MATH_MVEI is defined off Arm); the _dsp and _mve variants are the
 * answers for Cortex-M cores with the DSP extension and with Helium. Each request is one
 * line on stdin, one number answers it on stdout:
 *
 *   conv ARCH n h w c  fh fw fc  on oh ow oc  sh sw ph pw dh dw
 *   conv16 ARCH (as conv: int16 activations, 16x8)
 *   conv_add ARCH tile (then as conv: conv2d_add's tile of output bytes, and conv's buffer)
 *   dw   ARCH n h w c  fh fw  on oh ow oc  sh sw ph pw dh dw  ch_mult
 *   fc   ARCH accum_depth output_depth
 *   avgpool ARCH output_width channels
 *   avgpool16 ARCH (as avgpool: int16)
 *
 * ARCH is c, dsp or mve. A malformed request answers -1.
 */
#include <stdio.h>
#include <string.h>

#include "arm_nnfunctions.h"

typedef int32_t (*conv_fn)(const cmsis_nn_conv_params *, const cmsis_nn_dims *,
                           const cmsis_nn_dims *, const cmsis_nn_dims *);
typedef int32_t (*dw_fn)(const cmsis_nn_dw_conv_params *, const cmsis_nn_dims *,
                         const cmsis_nn_dims *, const cmsis_nn_dims *);
typedef int32_t (*fc_fn)(const cmsis_nn_dims *);
typedef int32_t (*pool_fn)(const int, const int);

static int arch_index(const char *arch)
{
    if (strcmp(arch, "c") == 0) {
        return 0;
    }
    if (strcmp(arch, "dsp") == 0) {
        return 1;
    }
    if (strcmp(arch, "mve") == 0) {
        return 2;
    }
    return -1;
}

/* conv and conv16: the wrapper's size for these dims, by one of fns (c, dsp, mve). */
static long conv_size(const conv_fn *fns, int a, const char *line)
{
    cmsis_nn_conv_params p;
    cmsis_nn_dims in, f, out;
    memset(&p, 0, sizeof(p));
    if (sscanf(line, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &in.n, &in.h,
               &in.w, &in.c, &f.h, &f.w, &f.c, &out.n, &out.h, &out.w, &out.c, &p.stride.h,
               &p.stride.w, &p.padding.h, &p.padding.w, &p.dilation.h, &p.dilation.w) != 17) {
        return -1;
    }
    f.n = out.c;
    return fns[a](&p, &in, &f, &out);
}

static long conv(int a, const char *line)
{
    static const conv_fn fns[3] = {arm_convolve_wrapper_s8_get_buffer_size,
                                   arm_convolve_wrapper_s8_get_buffer_size_dsp,
                                   arm_convolve_wrapper_s8_get_buffer_size_mve};
    return conv_size(fns, a, line);
}

/* conv_add: the tile of the conv's output (its bytes first on the line, a word multiple)
 * and then the wrapper's buffer for the whole convolution. */
static long conv_add(int a, const char *line)
{
    long tile = -1, size;
    int used = 0;
    if (sscanf(line, "%ld %n", &tile, &used) != 1 || tile < 0) {
        return -1;
    }
    size = conv(a, line + used);
    return size < 0 ? -1 : tile + size;
}

static long conv16(int a, const char *line)
{
    static const conv_fn fns[3] = {arm_convolve_wrapper_s16_get_buffer_size,
                                   arm_convolve_wrapper_s16_get_buffer_size_dsp,
                                   arm_convolve_wrapper_s16_get_buffer_size_mve};
    return conv_size(fns, a, line);
}

static long depthwise(int a, const char *line)
{
    static const dw_fn fns[3] = {arm_depthwise_conv_wrapper_s8_get_buffer_size,
                                 arm_depthwise_conv_wrapper_s8_get_buffer_size_dsp,
                                 arm_depthwise_conv_wrapper_s8_get_buffer_size_mve};
    cmsis_nn_dw_conv_params p;
    cmsis_nn_dims in, f, out;
    memset(&p, 0, sizeof(p));
    if (sscanf(line, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &in.n, &in.h,
               &in.w, &in.c, &f.h, &f.w, &out.n, &out.h, &out.w, &out.c, &p.stride.h,
               &p.stride.w, &p.padding.h, &p.padding.w, &p.dilation.h, &p.dilation.w,
               &p.ch_mult) != 17) {
        return -1;
    }
    f.n = 1;
    f.c = out.c;
    return fns[a](&p, &in, &f, &out);
}

static long fully_connected(int a, const char *line)
{
    static const fc_fn fns[3] = {arm_fully_connected_s8_get_buffer_size,
                                 arm_fully_connected_s8_get_buffer_size_dsp,
                                 arm_fully_connected_s8_get_buffer_size_mve};
    cmsis_nn_dims f;
    memset(&f, 0, sizeof(f));
    if (sscanf(line, "%d %d", &f.n, &f.c) != 2) {
        return -1;
    }
    f.h = 1;
    f.w = 1;
    return fns[a](&f);
}

static long pool_size(const pool_fn *fns, int a, const char *line)
{
    int width, channels;
    if (sscanf(line, "%d %d", &width, &channels) != 2) {
        return -1;
    }
    return fns[a](width, channels);
}

static long avgpool(int a, const char *line)
{
    static const pool_fn fns[3] = {arm_avgpool_s8_get_buffer_size,
                                   arm_avgpool_s8_get_buffer_size_dsp,
                                   arm_avgpool_s8_get_buffer_size_mve};
    return pool_size(fns, a, line);
}

static long avgpool16(int a, const char *line)
{
    static const pool_fn fns[3] = {arm_avgpool_s16_get_buffer_size,
                                   arm_avgpool_s16_get_buffer_size_dsp,
                                   arm_avgpool_s16_get_buffer_size_mve};
    return pool_size(fns, a, line);
}

int main(void)
{
    char line[512];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        char what[16], arch[8];
        int used = 0;
        long size = -1;
        if (sscanf(line, "%15s %7s %n", what, arch, &used) == 2 && arch_index(arch) >= 0) {
            int a = arch_index(arch);
            const char *rest = line + used;
            if (strcmp(what, "conv") == 0) {
                size = conv(a, rest);
            } else if (strcmp(what, "conv_add") == 0) {
                size = conv_add(a, rest);
            } else if (strcmp(what, "conv16") == 0) {
                size = conv16(a, rest);
            } else if (strcmp(what, "dw") == 0) {
                size = depthwise(a, rest);
            } else if (strcmp(what, "fc") == 0) {
                size = fully_connected(a, rest);
            } else if (strcmp(what, "avgpool") == 0) {
                size = avgpool(a, rest);
            } else if (strcmp(what, "avgpool16") == 0) {
                size = avgpool16(a, rest);
            }
        }
        printf("%ld\n", size);
    }
    return 0;
}
