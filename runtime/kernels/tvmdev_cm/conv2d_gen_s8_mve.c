/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: CONV_2D int8 with more than one tap per input channel
 * (3x3, a first convolution's 3x3x3 or 10x4x1, any size, stride and padding, no groups or
 * dilation) on a Cortex-M55, as a matrix product of windows and the filter (tvmk_cm.h).
 *
 * Two output pixels at a time, each one's window (KH x KW x C taps in the filter's order)
 * is gathered into the scratch, `chunks` x 16 bytes, its padding the input's zero point:
 * every row of the window whose columns are all inside is one contiguous copy (VCTP
 * predicated vector loads and stores), the others a column at a time. Then every group of
 * four output channels takes the block core (tvmk_cm_mve_mm.h: six vector loads, eight
 * VMLADAVA a chunk) against the weights laid out at generation time (packed_weights: per
 * group, per chunk, the four channels' 16 bytes, zeros past the taps and the channels),
 * and each group's constants (folded_bias: per group five vectors of four: the bias plus
 * input_offset times the sum of the channel's weights, the multiplier, the left shift,
 * minus the right shift, -1 where the right shift is positive). sum(w * x) + bias +
 * input_offset * sum(w) over a window whose padding holds the zero point is TFLM's
 * accumulator, both wrapping modulo 2^32. Requantization is TFLM's
 * MultiplyByQuantizedMultiplier exactly (as depthwise_conv2d_s8_mve.c's, per channel
 * vectors): four outputs a vector, stored as four bytes (the last group's predicated).
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

#include "tvmk_cm_mve_mm.h"

/* One group of four output channels' constants (folded_bias), as laid out. */
struct tvmk_cm_mve_cg {
    int32_t bias[4], multiplier[4], left[4], neg_right[4], rounds[4];
};

/* What the pass reads of the params, copied out (the int8 stores would otherwise make the
 * compiler read them again). */
struct tvmk_cm_mve_cv {
    const int8_t *w;
    const struct tvmk_cm_mve_cg *g;
    int32_t M, chunks, output_offset, activation_min, activation_max;
};

/* TFLM's MultiplyByQuantizedMultiplier of four channels' accumulators of two pixels (a,
 * b), offset and clamped, each constant loaded once for both. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_cg_requantize(int32x4_t *a, int32x4_t *b, const struct tvmk_cm_mve_cg *g,
                          const struct tvmk_cm_mve_cv *d)
{
    int32x4_t c = vldrwq_s32(g->bias), x = vaddq_s32(*a, c), y = vaddq_s32(*b, c);
    c = vldrwq_s32(g->left);
    x = vshlq_s32(x, c);
    y = vshlq_s32(y, c);
    c = vldrwq_s32(g->multiplier);
    x = vqrdmulhq_s32(x, c);
    y = vqrdmulhq_s32(y, c);
    c = vldrwq_s32(g->rounds);
    x = vqaddq_s32(x, vandq_s32(vshrq_n_s32(x, 31), c));
    y = vqaddq_s32(y, vandq_s32(vshrq_n_s32(y, 31), c));
    c = vldrwq_s32(g->neg_right);
    x = vaddq_n_s32(vrshlq_s32(x, c), d->output_offset);
    y = vaddq_n_s32(vrshlq_s32(y, c), d->output_offset);
    c = vdupq_n_s32(d->activation_min);
    x = vmaxq_s32(x, c);
    y = vmaxq_s32(y, c);
    c = vdupq_n_s32(d->activation_max);
    *a = vminq_s32(x, c);
    *b = vminq_s32(y, c);
}

/* Two windows (x0, x1: pixels whose outputs are at y and y + M; `two` 0: x0's alone),
 * every output channel. */
static __attribute__((noinline)) void
tvmk_cm_mve_conv_pair(const int8_t *x0, const int8_t *x1, int8_t *y, int two,
                      const struct tvmk_cm_mve_cv *d)
{
    const int8_t *w = d->w;
    const struct tvmk_cm_mve_cg *g = d->g;
    const int32_t M = d->M, step = 64 * d->chunks;
    int32_t m = 0;
    for (; m + 4 <= M; m += 4, g++, w += step) {
        int32x4_t a, b;
        tvmk_cm_mve_mm_2x4(x0, x1, w, d->chunks, &a, &b);
        tvmk_cm_mve_cg_requantize(&a, &b, g, d);
        vstrbq_s32(y + m, a);
        if (two) {
            vstrbq_s32(y + M + m, b);
        }
    }
    if (m < M) { /* the last one to three channels */
        const mve_pred16_t lanes = vctp32q((uint32_t)(M - m));
        int32x4_t a, b;
        tvmk_cm_mve_mm_2x4(x0, x1, w, d->chunks, &a, &b);
        tvmk_cm_mve_cg_requantize(&a, &b, g, d);
        vstrbq_p_s32(y + m, a, lanes);
        if (two) {
            vstrbq_p_s32(y + M + m, b, lanes);
        }
    }
}

/* n bytes (n >= 0) from src to dst: a tail-predicated loop (WLSTP/LETP: none when n is
 * 0), 16 bytes a pass, the last one's bytes past n not loaded or stored. Returns dst + n. */
static inline __attribute__((always_inline)) int8_t *tvmk_cm_mve_copy(int8_t *dst,
                                                                    const int8_t *src,
                                                                    int32_t n)
{
    int8_t *const end = dst + n;
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n\t"
                     "1:\n\t"
                     "vldrb.8 q0, [%[s]], #16\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n\t"
                     "2:\n\t"
                     : [d] "+r"(dst), [s] "+r"(src)
                     : [n] "r"(n)
                     : "q0", "lr", "memory");
    return end; /* (dst moved on 16 bytes a pass, the last one's too) */
}

/* n bytes (n >= 0) of the zero point (every byte of z) at dst, as tvmk_cm_mve_copy;
 * returns dst + n. */
static inline __attribute__((always_inline)) int8_t *tvmk_cm_mve_fill(int8_t *dst, int8x16_t z,
                                                                    int32_t n)
{
    int8_t *const end = dst + n;
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n\t"
                     "1:\n\t"
                     "vstrb.8 %q[z], [%[d]], #16\n\t"
                     "letp lr, 1b\n\t"
                     "2:\n\t"
                     : [d] "+r"(dst)
                     : [n] "r"(n), [z] "w"(z)
                     : "lr", "memory");
    return end;
}

/* `rows` rows of n bytes (n >= 1), `line` bytes apart from src, one after the other at
 * dst: the copy's tail-predicated loop per row, in one block. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_rows(int8_t *dst, const int8_t *src, int32_t n, int32_t line, int32_t rows)
{
    const int32_t back = n - ((n + 15) & ~15); /* the last pass moved dst on 16 bytes */
    const int8_t *s;
    __asm__ volatile("0:\n\t"
                     "mov %[s], %[src]\n\t"
                     "wlstp.8 lr, %[n], 2f\n\t"
                     "1:\n\t"
                     "vldrb.8 q0, [%[s]], #16\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n\t"
                     "2:\n\t"
                     "add %[d], %[d], %[back]\n\t"
                     "add %[src], %[src], %[line]\n\t"
                     "subs %[rows], %[rows], #1\n\t"
                     "bne 0b\n\t"
                     : [d] "+r"(dst), [src] "+r"(src), [rows] "+r"(rows), [s] "=&r"(s)
                     : [n] "r"(n), [line] "r"(line), [back] "r"(back)
                     : "q0", "lr", "memory", "cc");
}

/* The layer's geometry, as the window reads it. */
struct tvmk_cm_mve_geo {
    int32_t C, KH, KW, H, W, row, line, stride_h, stride_w, pad_top, pad_left;
    int8x16_t z; /* the input's zero point in every byte */
};

/* The window of output pixel (oy, ox) of image x into dst, its padding the zero point:
 * inside the input, its rows copied in one block; at a border, each row inside the input
 * is the columns left of the input (zero points), the ones inside (one copy), the ones
 * right of it. */
static __attribute__((noinline)) void tvmk_cm_mve_window(int8_t *dst, const int8_t *x,
                                                         int32_t oy, int32_t ox,
                                                         const struct tvmk_cm_mve_geo *g)
{
    const int32_t C = g->C, row = g->row, line = g->line;
    const int32_t ix0 = ox * g->stride_w - g->pad_left;
    const int32_t left = ix0 < 0 ? -ix0 * C : 0;
    const int32_t over = ix0 + g->KW - g->W;
    const int32_t right = over > 0 ? over * C : 0;
    const int32_t inside = row - left - right;
    int32_t iy = oy * g->stride_h - g->pad_top;
    const int8_t *src = x + iy * line + ix0 * C + left;
    if (left == 0 && right == 0 && iy >= 0 && iy + g->KH <= g->H) {
        tvmk_cm_mve_rows(dst, src, row, line, g->KH);
        return;
    }
    for (int32_t ky = 0; ky < g->KH; ky++, iy++, src += line) {
        if (iy < 0 || iy >= g->H) {
            dst = tvmk_cm_mve_fill(dst, g->z, row);
        } else {
            dst = tvmk_cm_mve_fill(dst, g->z, left);
            dst = tvmk_cm_mve_copy(dst, src, inside);
            dst = tvmk_cm_mve_fill(dst, g->z, right);
        }
    }
}

int32_t tvmk_cm_conv2d_gen_s8_mve(const int8_t *X, const int8_t *W, int8_t *Y,
                                  const struct tvmk_conv2d_s8_params *p)
{
    const int32_t taps = p->KH * p->KW * p->C;
    const int32_t chunks = (taps + 15) / 16;
    const int32_t plane = p->OH * p->OW;
    int8_t *s0 = (int8_t *)p->scratch;
    int8_t *s1 = s0 + 16 * chunks;
    struct tvmk_cm_mve_cv d;
    struct tvmk_cm_mve_geo g;
    (void)W;

    if (p->group != 1 || p->dil_h != 1 || p->dil_w != 1 || p->packed_weights == NULL ||
        p->folded_bias == NULL || 32 * chunks > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    d.w = (const int8_t *)p->packed_weights;
    d.g = (const struct tvmk_cm_mve_cg *)p->folded_bias;
    d.M = p->M;
    d.chunks = chunks;
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    g.C = p->C;
    g.KH = p->KH;
    g.KW = p->KW;
    g.H = p->H;
    g.W = p->W;
    g.row = p->KW * p->C;
    g.line = p->W * p->C;
    g.stride_h = p->stride_h;
    g.stride_w = p->stride_w;
    g.pad_top = p->pad_top;
    g.pad_left = p->pad_left;
    g.z = vdupq_n_s8((int8_t)(-p->input_offset));
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = X + n * p->H * p->W * p->C;
        int8_t *y = Y + n * plane * p->M;
        int32_t oy = 0, ox = 0;
        for (int32_t i = 0; i < plane; i += 2) {
            tvmk_cm_mve_window(s0, x, oy, ox, &g);
            if (++ox == p->OW) {
                ox = 0;
                oy++;
            }
            if (i + 1 == plane) {
                tvmk_cm_mve_conv_pair(s0, s0, y + i * p->M, 0, &d);
                break;
            }
            tvmk_cm_mve_window(s1, x, oy, ox, &g);
            if (++ox == p->OW) {
                ox = 0;
                oy++;
            }
            tvmk_cm_mve_conv_pair(s0, s1, y + i * p->M, 1, &d);
        }
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_conv2d_gen_s8_mve(const int8_t *X, const int8_t *W, int8_t *Y,
                                  const struct tvmk_conv2d_s8_params *p)
{
    (void)X;
    (void)W;
    (void)Y;
    (void)p;
    return TVM_DEVICE_ERR_INVALID; /* no MVE: the hooks declined this path */
}

#endif
