/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: CONV_2D int8 with a 1x1 filter (a pointwise convolution), no padding, any
 * stride. The filter was widened to int16 pairs at generation time, in the order SXTB16
 * splits four int8 activations (tvmk_cm.h), so only the activations are unpacked at run
 * time: each input pixel once, into the scratch; then four output channels at a time
 * take one SMLAD per pair of input channels, each activation pair loaded once for the
 * four. Bias, input offset, and the output offset with the rounding are folded into
 * per-channel constants at generation time (tvmdev/plan/hooks/tvmdev_cm_1x1.py).
 */
#include <string.h>

#include "tvmk_cm.h"
#include "tvmk_cm_1x1.h"
#include "tvmk_cm_arith.h"

/* One pixel's C int8 values as `quads` pairs of words: (x[4j], x[4j + 2]) and
 * (x[4j + 1], x[4j + 3]), zeros past C. */
static void tvmk_cm_1x1_widen(int32_t *dst, const int8_t *x, int32_t C)
{
    int32_t c = 0;
    for (; c + 4 <= C; c += 4) {
        int32_t v;
        memcpy(&v, x + c, sizeof v);
        dst[0] = TVMK_CM_EVEN(v);
        dst[1] = TVMK_CM_ODD(v);
        dst += 2;
    }
    if (c < C) {
        int8_t tail[4] = {0, 0, 0, 0};
        int32_t v;
        memcpy(tail, x + c, (size_t)(C - c));
        memcpy(&v, tail, sizeof v);
        dst[0] = TVMK_CM_EVEN(v);
        dst[1] = TVMK_CM_ODD(v);
    }
}

/* The group's multiply-accumulates: per quad of input channels, the pixel's even pair
 * times the four channels' even-pair words, then the odd pair times their odd ones. With
 * the DSP extension, LDRD and LDM load the operands (GCC loads the words one by one):
 * 11 instructions per 16 multiplies, two quads per pass of the loop. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMK_CM_1X1_QUAD                                                                 \
    "ldrd %[xe], %[xo], [%[xs]], #8\n\t"                                                 \
    "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                      \
    "smlad %[a0], %[xe], %[w0], %[a0]\n\t"                                               \
    "smlad %[a1], %[xe], %[w1], %[a1]\n\t"                                               \
    "smlad %[a2], %[xe], %[w2], %[a2]\n\t"                                               \
    "smlad %[a3], %[xe], %[w3], %[a3]\n\t"                                               \
    "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                      \
    "smlad %[a0], %[xo], %[w0], %[a0]\n\t"                                               \
    "smlad %[a1], %[xo], %[w1], %[a1]\n\t"                                               \
    "smlad %[a2], %[xo], %[w2], %[a2]\n\t"                                               \
    "smlad %[a3], %[xo], %[w3], %[a3]\n\t"

/* One group's multiply-accumulates into a0..a3 (in place), reading `quads` pairs of
 * words from xs and eight words a quad from w (which ends past them). */
#define TVMK_CM_1X1_OPERANDS                                                             \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xs] "+r"(xs), [w] "+r"(w), \
        [xe] "=&r"(xe), [xo] "=&r"(xo), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),  \
        [w3] "=&r"(w3)
#define TVMK_CM_1X1_MACS(quads)                                                          \
    do {                                                                                 \
        /* LDM's list ascends: the four words in fixed registers */                      \
        register int32_t w0 __asm__("r4");                                               \
        register int32_t w1 __asm__("r5");                                               \
        register int32_t w2 __asm__("r6");                                               \
        register int32_t w3 __asm__("r7");                                               \
        const int32_t *xs = xs0;                                                         \
        int32_t xe, xo;                                                                  \
        if ((quads) & 1) {                                                               \
            __asm__ volatile(TVMK_CM_1X1_QUAD : TVMK_CM_1X1_OPERANDS : : "memory");      \
        }                                                                                \
        if (xs != xend) {                                                                \
            __asm__ volatile("1:\n\t" TVMK_CM_1X1_QUAD TVMK_CM_1X1_QUAD                   \
                             "cmp %[xs], %[end]\n\t"                                      \
                             "bne 1b\n\t"                                                 \
                             : TVMK_CM_1X1_OPERANDS                                      \
                             : [end] "r"(xend)                                           \
                             : "cc", "memory");                                          \
        }                                                                                \
    } while (0)
#else
#define TVMK_CM_1X1_MACS(quads)                                                          \
    do {                                                                                 \
        const int32_t *xs = xs0;                                                         \
        for (; xs != xend; xs += 2, w += 8) {                                            \
            a0 = TVMK_CM_SMLAD(xs[1], w[4], TVMK_CM_SMLAD(xs[0], w[0], a0));             \
            a1 = TVMK_CM_SMLAD(xs[1], w[5], TVMK_CM_SMLAD(xs[0], w[1], a1));             \
            a2 = TVMK_CM_SMLAD(xs[1], w[6], TVMK_CM_SMLAD(xs[0], w[2], a2));             \
            a3 = TVMK_CM_SMLAD(xs[1], w[7], TVMK_CM_SMLAD(xs[0], w[3], a3));             \
        }                                                                                \
    } while (0)
#endif

/* One channel's requantization of its accumulator, which the generator scaled by
 * 2^(left shift + 1) (its weights and bias: tvmdev/plan/hooks/tvmdev_cm_1x1.py), from
 * its record r: multiplier, c, right shift. TFLM's MultiplyByQuantizedMultiplier plus
 * the output offset, then the clamp: SMMULR is the doubling high multiply (the
 * accumulator fits int32, proved); c is 2^(right - 1) + output_offset * 2^right (the
 * offset alone when right is 0), the rounding and the offset in one add (no overflow,
 * proved), and x >> 31 rounds a negative tie away from zero when right > 0. `full`: the
 * clamp is int8's whole range (one SSAT); `mixed`: some channel's right shift is 0. */
static inline __attribute__((always_inline)) int8_t
tvmk_cm_1x1_requantize(int32_t acc, const int32_t *r, int32_t lo, int32_t hi, const int full,
                       const int mixed)
{
    const int32_t x = tvmk_cm_smmulr(acc, r[0]);
    const int32_t below = mixed ? (x >> 31) & -(int32_t)(r[2] != 0) : x >> 31;
    int32_t v = (x + below + r[1]) >> r[2];
    if (full) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
        v = __ssat(v, 8);
#else
        v = v < -128 ? -128 : v;
        v = v > 127 ? 127 : v;
#endif
    } else {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
    }
    return (int8_t)v;
}

/* Every output channel of one pixel (xs0: its widened words, `quads` pairs), the groups
 * of four read in turn from packed_weights: four scaled folded biases, the quads' words
 * (per quad, the four channels' even-pair words, then their odd-pair words), four
 * records; the last group stores its first M % 4 (or 4). `full`: a constant where it is
 * inlined. */
static inline __attribute__((always_inline)) void
tvmk_cm_1x1_channels(const int32_t *xs0, int8_t *out, const struct tvmk_conv2d_s8_params *p,
                     int32_t quads, const int full, const int mixed)
{
    const int32_t *w = p->packed_weights;
    const int32_t *xend = xs0 + 2 * quads;
    const int32_t lo = p->activation_min, hi = p->activation_max;
    int8_t *last = out + ((p->M - 1) & ~3);
    for (;;) {
        int32_t a0 = w[0], a1 = w[1], a2 = w[2], a3 = w[3];
        w += 4;
        TVMK_CM_1X1_MACS(quads);
        out[0] = tvmk_cm_1x1_requantize(a0, w, lo, hi, full, mixed);
        if (out == last) {
            const int32_t n = p->M - ((p->M - 1) & ~3);
            if (n > 1) {
                out[1] = tvmk_cm_1x1_requantize(a1, w + 3, lo, hi, full, mixed);
            }
            if (n > 2) {
                out[2] = tvmk_cm_1x1_requantize(a2, w + 6, lo, hi, full, mixed);
            }
            if (n > 3) {
                out[3] = tvmk_cm_1x1_requantize(a3, w + 9, lo, hi, full, mixed);
            }
            return;
        }
        out[1] = tvmk_cm_1x1_requantize(a1, w + 3, lo, hi, full, mixed);
        out[2] = tvmk_cm_1x1_requantize(a2, w + 6, lo, hi, full, mixed);
        out[3] = tvmk_cm_1x1_requantize(a3, w + 9, lo, hi, full, mixed);
        w += 12;
        out += 4;
    }
}

/* Not inlined: one copy of the loops for each clamp, and one for layers with a channel
 * whose right shift is 0. */
__attribute__((noinline)) void tvmk_cm_1x1_full(const int32_t *xs, int8_t *out,
                                                const struct tvmk_conv2d_s8_params *p,
                                                int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 1, 0);
}

__attribute__((noinline)) void tvmk_cm_1x1_clamped(const int32_t *xs, int8_t *out,
                                                   const struct tvmk_conv2d_s8_params *p,
                                                   int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 0, 0);
}

__attribute__((noinline)) void tvmk_cm_1x1_mixed(const int32_t *xs, int8_t *out,
                                                 const struct tvmk_conv2d_s8_params *p,
                                                 int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 0, 1);
}

/* Whether some channel's record has a right shift of 0. */
int tvmk_cm_1x1_mixed_shifts(const struct tvmk_conv2d_s8_params *p, int32_t quads)
{
    const int32_t *rec = p->packed_weights + 4 + 8 * quads;
    for (int32_t m = 0; m < p->M; m += 4, rec += 16 + 8 * quads) {
        for (int32_t k = 0; k < 4 && m + k < p->M; k++) {
            if (rec[3 * k + 2] == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* The clamp (one SSAT for int8's whole range). */
static inline __attribute__((always_inline)) int8_t tvmk_cm_1x1_clamp(int32_t v, int32_t lo,
                                                                      int32_t hi,
                                                                      const int full)
{
    if (full) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
        v = __ssat(v, 8);
#else
        v = v < -128 ? -128 : v;
        v = v > 127 ? 127 : v;
#endif
    } else {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
    }
    return (int8_t)v;
}

/* --- the int8 filter (when the widened one would exceed the board's flash budget) ---
 * The filter stays TFLM's (OHWI: each output channel's C taps in a row, C a multiple of
 * 4); folded_bias holds per channel its folded bias (unscaled), multiplier, left shift
 * plus one, rounding-and-offset constant and right shift. Four pixels at a time are
 * widened, interleaved per quad of input channels (pixel 0's two words, pixel 1's, ...),
 * so each filter word, unpacked once by SXTB16, serves the four: per quad one LDR, two
 * SXTB16, two LDMs, eight SMLADs. */
static void tvmk_cm_1x1_widen4(int32_t *dst, const int8_t *const px[4], int32_t n, int32_t C)
{
    for (int32_t k = 0; k < 4; k++) {
        int32_t *d = dst + 2 * k;
        for (int32_t c = 0; c < C; c += 4, d += 8) {
            int32_t v = 0;
            if (k < n) {
                memcpy(&v, px[k] + c, sizeof v);
            }
            d[0] = TVMK_CM_EVEN(v);
            d[1] = TVMK_CM_ODD(v);
        }
    }
}

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMK_CM_1X1_QUAD8                                                                \
    "ldr %[v], [%[w]], #4\n\t"                                                           \
    "sxtb16 %[o], %[v], ror #8\n\t"                                                      \
    "sxtb16 %[v], %[v]\n\t"                                                              \
    "ldmia %[xs]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"                                     \
    "smlad %[a0], %[x0], %[v], %[a0]\n\t"                                                \
    "smlad %[a0], %[x1], %[o], %[a0]\n\t"                                                \
    "smlad %[a1], %[x2], %[v], %[a1]\n\t"                                                \
    "smlad %[a1], %[x3], %[o], %[a1]\n\t"                                                \
    "ldmia %[xs]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"                                     \
    "smlad %[a2], %[x0], %[v], %[a2]\n\t"                                                \
    "smlad %[a2], %[x1], %[o], %[a2]\n\t"                                                \
    "smlad %[a3], %[x2], %[v], %[a3]\n\t"                                                \
    "smlad %[a3], %[x3], %[o], %[a3]\n\t"
#define TVMK_CM_1X1_OPERANDS8                                                            \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xs] "+r"(xs), [w] "+r"(w), \
        [v] "=&r"(v), [o] "=&r"(o), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2),      \
        [x3] "=&r"(x3)
#endif

/* One output channel of four pixels: `w` its int8 row, `r` its record. */
static inline __attribute__((always_inline)) void
tvmk_cm_1x1_channel8(const int32_t *xs0, const int8_t *w, const int32_t *r, int8_t *out,
                     int32_t M, int32_t quads, int32_t n, int32_t lo, int32_t hi, const int full)
{
    int32_t a0 = r[0], a1 = r[0], a2 = r[0], a3 = r[0];
    const int32_t *xs = xs0;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    {
        /* LDM's list ascends: the four words in fixed registers */
        register int32_t x0 __asm__("r4");
        register int32_t x1 __asm__("r5");
        register int32_t x2 __asm__("r6");
        register int32_t x3 __asm__("r7");
        const int32_t *xend = xs0 + 8 * quads;
        int32_t v, o;
        if (quads & 1) {
            __asm__ volatile(TVMK_CM_1X1_QUAD8 : TVMK_CM_1X1_OPERANDS8 : : "memory");
        }
        if (xs != xend) {
            /* the end from memory: thirteen registers are taken */
            __asm__ volatile("1:\n\t" TVMK_CM_1X1_QUAD8 TVMK_CM_1X1_QUAD8
                             "ldr %[v], %[end]\n\t"
                             "cmp %[xs], %[v]\n\t"
                             "bne 1b\n\t"
                             : TVMK_CM_1X1_OPERANDS8
                             : [end] "m"(xend)
                             : "cc", "memory");
        }
    }
#else
    for (int32_t j = 0; j < quads; j++, xs += 8, w += 4) {
        int32_t v;
        memcpy(&v, w, sizeof v);
        const int32_t e = TVMK_CM_EVEN(v), o = TVMK_CM_ODD(v);
        a0 = TVMK_CM_SMLAD(xs[1], o, TVMK_CM_SMLAD(xs[0], e, a0));
        a1 = TVMK_CM_SMLAD(xs[3], o, TVMK_CM_SMLAD(xs[2], e, a1));
        a2 = TVMK_CM_SMLAD(xs[5], o, TVMK_CM_SMLAD(xs[4], e, a2));
        a3 = TVMK_CM_SMLAD(xs[7], o, TVMK_CM_SMLAD(xs[6], e, a3));
    }
#endif
    {
        /* the accumulators scaled by 2^(left shift + 1), then the record's requantization
         * (a right shift of 0 takes no rounding of negative values: mask 0) */
        const int32_t left = r[2], mult = r[1], c = r[3], right = r[4];
        const int32_t mask = -(int32_t)(right != 0);
#define TVMK_CM_1X1_OUT8(a, k)                                                           \
    do {                                                                                 \
        const int32_t x = tvmk_cm_smmulr((int32_t)((uint32_t)(a) << left), mult);        \
        int32_t y = (x + ((x >> 31) & mask) + c) >> right;                               \
        out[(k) * M] = tvmk_cm_1x1_clamp(y, lo, hi, full);                              \
    } while (0)
        TVMK_CM_1X1_OUT8(a0, 0);
        if (n == 4) {
            TVMK_CM_1X1_OUT8(a1, 1);
            TVMK_CM_1X1_OUT8(a2, 2);
            TVMK_CM_1X1_OUT8(a3, 3);
        } else {
            if (n > 1) {
                TVMK_CM_1X1_OUT8(a1, 1);
            }
            if (n > 2) {
                TVMK_CM_1X1_OUT8(a2, 2);
            }
        }
#undef TVMK_CM_1X1_OUT8
    }
}

/* Every output channel of up to four pixels (`n`), widened into xs; `full`: a constant
 * where it is inlined. */
static inline __attribute__((always_inline)) void
tvmk_cm_1x1_pixels8(const int32_t *xs, const int8_t *W, int8_t *out,
                    const struct tvmk_conv2d_s8_params *p, int32_t n, const int full)
{
    const int32_t quads = p->C / 4;
    for (int32_t m = 0; m < p->M; m++) {
        tvmk_cm_1x1_channel8(xs, W + m * p->C, p->folded_bias + 5 * m, out + m, p->M, quads,
                             n, p->activation_min, p->activation_max, full);
    }
}

__attribute__((noinline)) void tvmk_cm_1x1_full8(const int32_t *xs, const int8_t *W,
                                                 int8_t *out,
                                                 const struct tvmk_conv2d_s8_params *p,
                                                 int32_t n)
{
    tvmk_cm_1x1_pixels8(xs, W, out, p, n, 1);
}

__attribute__((noinline)) void
tvmk_cm_1x1_clamped8(const int32_t *xs, const int8_t *W, int8_t *out,
                     const struct tvmk_conv2d_s8_params *p, int32_t n)
{
    tvmk_cm_1x1_pixels8(xs, W, out, p, n, 0);
}

static int32_t tvmk_cm_conv1x1_int8(const int8_t *X, const int8_t *W, int8_t *Y,
                                    const struct tvmk_conv2d_s8_params *p)
{
    const int full = p->activation_min == -128 && p->activation_max == 127;
    const int32_t pixels = p->OH * p->OW;
    int32_t *xs = (int32_t *)p->scratch;
    if (p->C % 4 != 0 || (int64_t)p->C * 8 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    for (int32_t b = 0; b < p->N; b++) {
        int8_t *out = Y + b * pixels * p->M;
        for (int32_t i = 0; i < pixels; i += 4) {
            const int8_t *px[4];
            const int32_t n = pixels - i < 4 ? pixels - i : 4;
            for (int32_t k = 0; k < 4; k++) {
                const int32_t at = i + (k < n ? k : 0);
                const int32_t oy = at / p->OW, ox = at % p->OW;
                px[k] = X + ((b * p->H + oy * p->stride_h) * p->W + ox * p->stride_w) * p->C;
            }
            tvmk_cm_1x1_widen4(xs, px, n, p->C);
            if (full) {
                tvmk_cm_1x1_full8(xs, W, out + i * p->M, p, n);
            } else {
                tvmk_cm_1x1_clamped8(xs, W, out + i * p->M, p, n);
            }
        }
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_cm_conv1x1_s8(const int8_t *X, const int8_t *W, int8_t *Y,
                           const struct tvmk_conv2d_s8_params *p)
{
    const int32_t quads = (p->C + 3) / 4;
    int32_t *xs = (int32_t *)p->scratch;
    const int full = p->activation_min == -128 && p->activation_max == 127;
    int mixed;

    if (p->pad_top == 0 && p->pad_left == 0 && p->packed_weights == NULL &&
        p->folded_bias != NULL) {
        return tvmk_cm_conv1x1_int8(X, W, Y, p); /* the int8 filter */
    }
    if (p->pad_top != 0 || p->pad_left != 0 || p->packed_weights == NULL ||
        (int64_t)quads * 8 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    mixed = tvmk_cm_1x1_mixed_shifts(p, quads);
    for (int32_t n = 0; n < p->N; n++) {
        for (int32_t oy = 0; oy < p->OH; oy++) {
            const int8_t *row = X + ((n * p->H + oy * p->stride_h) * p->W) * p->C;
            int8_t *out = Y + ((n * p->OH + oy) * p->OW) * p->M;
            for (int32_t ox = 0; ox < p->OW; ox++) {
                tvmk_cm_1x1_widen(xs, row + ox * p->stride_w * p->C, p->C);
                if (mixed) {
                    tvmk_cm_1x1_mixed(xs, out, p, quads);
                } else if (full) {
                    tvmk_cm_1x1_full(xs, out, p, quads);
                } else {
                    tvmk_cm_1x1_clamped(xs, out, p, quads);
                }
                out += p->M;
            }
        }
    }
    return TVM_DEVICE_OK;
}
