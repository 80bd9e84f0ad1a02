/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: CONV_2D int8 with more than one tap per input channel
 * (3x3, a first convolution's 3x3x3 or 10x4x1, any size, stride and padding, no groups or
 * dilation) on a Cortex-M55, as a matrix product of windows and the filter (tvmk_cm.h).
 *
 * Two output pixels at a time, each one's window (KH x KW x C taps in the filter's order,
 * `chunks` x 16 bytes, its padding the input's zero point) is gathered into the scratch,
 * the two interleaved a chunk at a time (tvmk_cm_mve_mm24.h): with C a multiple of 16 every
 * piece of a window (a row's columns left of the input, inside it, right of it) is whole
 * chunks, copied or filled by tail-predicated loops (WLSTP/LETP) storing 16 bytes every
 * 32; otherwise the window is gathered whole into a staging area first, then interleaved.
 * Then every group of four output channels takes the block core (six vector loads, eight
 * VMLADAVA a chunk) against four rows of the filter: the int8 filter itself (OHWI) when
 * its taps are whole chunks, else packed_weights (each row padded with zeros to whole
 * chunks: a first convolution's, a few hundred bytes); the last group's missing channels
 * read the last channel again and are not stored. folded_bias holds each group's
 * constants, five vectors of four: the bias plus input_offset times the sum of the
 * channel's weights, the multiplier, the left shift, minus the right shift, -1 where the
 * right shift is positive. sum(w * x) + bias + input_offset * sum(w) over a window whose
 * padding holds the zero point is TFLM's accumulator, both wrapping modulo 2^32.
 * Requantization is TFLM's MultiplyByQuantizedMultiplier exactly (as
 * depthwise_conv2d_s8_mve.c's, per channel vectors): four outputs a vector, stored as four
 * bytes (the last group's predicated).
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

#include "tvmk_cm_mve_mm24.h"

/* One group of four output channels' constants (folded_bias), as laid out. */
struct tvmk_cm_mve_cg {
    int32_t bias[4], multiplier[4], left[4], neg_right[4], rounds[4];
};

/* What the pass reads of the params, copied out (the int8 stores would otherwise make the
 * compiler read them again). */
struct tvmk_cm_mve_cv {
    int32x4_t lo, hi; /* the activation's bounds, every lane */
    const int8_t *w; /* output channel m's row at w + m x stride */
    const struct tvmk_cm_mve_cg *g;
    int32_t M, chunks, stride, output_offset, activation_min, activation_max;
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
    x = vmaxq_s32(x, d->lo);
    y = vmaxq_s32(y, d->lo);
    *a = vminq_s32(x, d->hi);
    *b = vminq_s32(y, d->hi);
}

/* The pair of windows at x (interleaved; outputs at y and y + M; `two` 0: window 0's
 * alone), every output channel. */
static __attribute__((noinline)) void
tvmk_cm_mve_conv_pair(const int8_t *x, int8_t *y, int two, const struct tvmk_cm_mve_cv *d)
{
    const struct tvmk_cm_mve_cg *g = d->g;
    const int32_t M = d->M, stride = d->stride;
    const int8_t *w = d->w;
    int32_t m = 0;
    for (; m + 4 <= M; m += 4, g++, w += 4 * stride) {
        int32_t sums[8];
        tvmk_cm_mve_mm_2x4(x, w, w + stride, w + 2 * stride, w + 3 * stride, d->chunks, sums);
        int32x4_t a = vldrwq_s32(sums), b = vldrwq_s32(sums + 4);
        tvmk_cm_mve_cg_requantize(&a, &b, g, d);
        vstrbq_s32(y + m, a);
        if (two) {
            vstrbq_s32(y + M + m, b);
        }
    }
    if (m < M) { /* the last one to three channels: the missing ones read the last again */
        const mve_pred16_t lanes = vctp32q((uint32_t)(M - m));
        const int8_t *last = d->w + (M - 1) * stride;
        const int8_t *w1 = m + 1 < M ? w + stride : last;
        const int8_t *w2 = m + 2 < M ? w + 2 * stride : last;
        int32_t sums[8];
        tvmk_cm_mve_mm_2x4(x, w, w1, w2, last, d->chunks, sums);
        int32x4_t a = vldrwq_s32(sums), b = vldrwq_s32(sums + 4);
        tvmk_cm_mve_cg_requantize(&a, &b, g, d);
        vstrbq_p_s32(y + m, a, lanes);
        if (two) {
            vstrbq_p_s32(y + M + m, b, lanes);
        }
    }
}

/* n bytes (n >= 0) from src to dst: a tail-predicated loop (WLSTP/LETP: none when n is
 * 0), 16 bytes a pass, dst moved on by `step` (16, or 32: a chunk of interleaved windows)
 * a pass, the last pass's bytes past n neither loaded nor stored. Returns dst moved on by
 * n (step 16) or by 2n (step 32, n a whole number of chunks). */
#define TVMK_CM_MVE_COPY(name, step)                                                     \
    static inline __attribute__((always_inline)) int8_t *name(int8_t *dst, const int8_t *src, \
                                                              int32_t n)                  \
    {                                                                                    \
        int8_t *const end = dst + n * ((step) / 16);                                     \
        __asm__ volatile("wlstp.8 lr, %[n], 2f\n\t"                                      \
                         "1:\n\t"                                                        \
                         "vldrb.8 q0, [%[s]], #16\n\t"                                   \
                         "vstrb.8 q0, [%[d]], #" #step "\n\t"                            \
                         "letp lr, 1b\n\t"                                               \
                         "2:\n\t"                                                        \
                         : [d] "+r"(dst), [s] "+r"(src)                                  \
                         : [n] "r"(n)                                                    \
                         : "q0", "lr", "memory");                                        \
        return end;                                                                      \
    }
TVMK_CM_MVE_COPY(tvmk_cm_mve_copy16, 16)
TVMK_CM_MVE_COPY(tvmk_cm_mve_copy32, 32)

/* n bytes (n >= 0) of the zero point (every byte of z) at dst, as TVMK_CM_MVE_COPY's. */
#define TVMK_CM_MVE_FILL(name, step)                                                     \
    static inline __attribute__((always_inline)) int8_t *name(int8_t *dst, int8x16_t z,      \
                                                              int32_t n)                  \
    {                                                                                    \
        int8_t *const end = dst + n * ((step) / 16);                                     \
        __asm__ volatile("wlstp.8 lr, %[n], 2f\n\t"                                      \
                         "1:\n\t"                                                        \
                         "vstrb.8 %q[z], [%[d]], #" #step "\n\t"                         \
                         "letp lr, 1b\n\t"                                               \
                         "2:\n\t"                                                        \
                         : [d] "+r"(dst)                                                 \
                         : [n] "r"(n), [z] "w"(z)                                        \
                         : "lr", "memory");                                              \
        return end;                                                                      \
    }
TVMK_CM_MVE_FILL(tvmk_cm_mve_fill16, 16)
TVMK_CM_MVE_FILL(tvmk_cm_mve_fill32, 32)

/* `rows` rows of n bytes (n >= 1), `line` bytes apart from src, one after the other from
 * dst (as TVMK_CM_MVE_COPY's, `back` bytes back after each: n rounded up to 16 less n for
 * step 16, 0 for step 32), in one block. */
#define TVMK_CM_MVE_ROWS(name, step)                                                     \
    static inline __attribute__((always_inline)) void name(                             \
        int8_t *dst, const int8_t *src, int32_t n, int32_t line, int32_t rows, int32_t back) \
    {                                                                                    \
        const int8_t *s;                                                                 \
        __asm__ volatile("0:\n\t"                                                        \
                         "mov %[s], %[src]\n\t"                                          \
                         "wlstp.8 lr, %[n], 2f\n\t"                                      \
                         "1:\n\t"                                                        \
                         "vldrb.8 q0, [%[s]], #16\n\t"                                   \
                         "vstrb.8 q0, [%[d]], #" #step "\n\t"                            \
                         "letp lr, 1b\n\t"                                               \
                         "2:\n\t"                                                        \
                         "sub %[d], %[d], %[back]\n\t"                                   \
                         "add %[src], %[src], %[line]\n\t"                               \
                         "subs %[rows], %[rows], #1\n\t"                                 \
                         "bne 0b\n\t"                                                    \
                         : [d] "+r"(dst), [src] "+r"(src), [rows] "+r"(rows), [s] "=&r"(s) \
                         : [n] "r"(n), [line] "r"(line), [back] "r"(back)                \
                         : "q0", "lr", "memory", "cc");                                  \
    }
TVMK_CM_MVE_ROWS(tvmk_cm_mve_rows16, 16)
TVMK_CM_MVE_ROWS(tvmk_cm_mve_rows32, 32)

/* The layer's geometry, as the window reads it. */
struct tvmk_cm_mve_geo {
    int32_t C, KH, KW, H, W, row, line, stride_h, stride_w, pad_top, pad_left;
    int8x16_t z; /* the input's zero point in every byte */
};

/* The window of output pixel (oy, ox) of image x into dst, its padding the zero point,
 * by the copies of `step` (a constant where inlined): inside the input, its rows copied
 * in one block; at a border, each row inside the input is the columns left of the input
 * (zero points), the ones inside (one copy), the ones right of it. */
#define TVMK_CM_MVE_WINDOW(name, step)                                                   \
    static __attribute__((noinline)) void name(int8_t *dst, const int8_t *x, int32_t oy,  \
                                               int32_t ox, const struct tvmk_cm_mve_geo *g) \
    {                                                                                    \
        const int32_t C = g->C, row = g->row, line = g->line;                            \
        const int32_t ix0 = ox * g->stride_w - g->pad_left;                              \
        const int32_t left = ix0 < 0 ? -ix0 * C : 0;                                     \
        const int32_t over = ix0 + g->KW - g->W;                                         \
        const int32_t right = over > 0 ? over * C : 0;                                   \
        const int32_t inside = row - left - right;                                       \
        int32_t iy = oy * g->stride_h - g->pad_top;                                      \
        const int8_t *src = x + iy * line + ix0 * C + left;                              \
        if (left == 0 && right == 0 && iy >= 0 && iy + g->KH <= g->H) {                  \
            tvmk_cm_mve_rows##step(dst, src, row, line, g->KH,                           \
                                   (step) == 16 ? ((row + 15) & ~15) - row : 0);         \
            return;                                                                      \
        }                                                                                \
        for (int32_t ky = 0; ky < g->KH; ky++, iy++, src += line) {                      \
            if (iy < 0 || iy >= g->H) {                                                  \
                dst = tvmk_cm_mve_fill##step(dst, g->z, row);                            \
            } else {                                                                     \
                dst = tvmk_cm_mve_fill##step(dst, g->z, left);                           \
                dst = tvmk_cm_mve_copy##step(dst, src, inside);                          \
                dst = tvmk_cm_mve_fill##step(dst, g->z, right);                          \
            }                                                                            \
        }                                                                                \
    }
TVMK_CM_MVE_WINDOW(tvmk_cm_mve_window16, 16)
TVMK_CM_MVE_WINDOW(tvmk_cm_mve_window32, 32)

/* The window of (oy, ox) as window j (0 or 1) of the interleaved pair at pair: directly
 * (C a multiple of 16: every piece whole chunks) or through the staging area. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_gather(int8_t *pair, int8_t *staging, int32_t j, const int8_t *x, int32_t oy,
                   int32_t ox, const struct tvmk_cm_mve_geo *g, int32_t taps)
{
    if (staging == NULL) {
        tvmk_cm_mve_window32(pair + 16 * j, x, oy, ox, g);
    } else {
        tvmk_cm_mve_window16(staging, x, oy, ox, g);
        (void)tvmk_cm_mve_copy32(pair + 16 * j, staging, taps);
    }
}

int32_t tvmk_cm_conv2d_gen_s8_mve(const int8_t *X, const int8_t *W, int8_t *Y,
                                  const struct tvmk_conv2d_s8_params *p)
{
    const int32_t taps = p->KH * p->KW * p->C;
    const int32_t chunks = (taps + 15) / 16;
    const int32_t plane = p->OH * p->OW;
    const int whole = p->C % 16 == 0; /* every piece of a window whole chunks */
    int8_t *pair = (int8_t *)p->scratch;
    int8_t *staging = whole ? NULL : pair + 32 * chunks;
    struct tvmk_cm_mve_cv d;
    struct tvmk_cm_mve_geo g;

    if (p->group != 1 || p->dil_h != 1 || p->dil_w != 1 || p->folded_bias == NULL ||
        (p->packed_weights == NULL && taps % 16 != 0) ||
        (whole ? 32 : 48) * chunks > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    d.w = p->packed_weights != NULL ? (const int8_t *)p->packed_weights : W;
    d.stride = p->packed_weights != NULL ? 16 * chunks : taps;
    d.g = (const struct tvmk_cm_mve_cg *)p->folded_bias;
    d.M = p->M;
    d.chunks = chunks;
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    d.lo = vdupq_n_s32(p->activation_min);
    d.hi = vdupq_n_s32(p->activation_max);
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
            tvmk_cm_mve_gather(pair, staging, 0, x, oy, ox, &g, taps);
            if (++ox == p->OW) {
                ox = 0;
                oy++;
            }
            if (i + 1 == plane) {
                tvmk_cm_mve_conv_pair(pair, y + i * p->M, 0, &d);
                break;
            }
            tvmk_cm_mve_gather(pair, staging, 1, x, oy, ox, &g, taps);
            if (++ox == p->OW) {
                ox = 0;
                oy++;
            }
            tvmk_cm_mve_conv_pair(pair, y + i * p->M, 1, &d);
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
