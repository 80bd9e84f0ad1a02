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
#include "tvmk_cm_arith.h"

/* SXTB16 of v, and of v rotated by 8: bytes 0 and 2, and bytes 1 and 3, sign-extended
 * to int16 halves. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMK_CM_EVEN(v) ((int32_t)__sxtb16((uint32_t)(v)))
#define TVMK_CM_ODD(v) ((int32_t)__sxtb16(((uint32_t)(v) >> 8) | ((uint32_t)(v) << 24)))
#else
static inline int32_t tvmk_cm_sxtb16(uint32_t v)
{
    const uint32_t lo = (uint32_t)(int32_t)(int8_t)(v & 0xFFu) & 0xFFFFu;
    const uint32_t hi = (uint32_t)(int32_t)(int8_t)((v >> 16) & 0xFFu) << 16;
    return (int32_t)(lo | hi);
}
#define TVMK_CM_EVEN(v) tvmk_cm_sxtb16((uint32_t)(v))
#define TVMK_CM_ODD(v) tvmk_cm_sxtb16((uint32_t)(v) >> 8)
#endif

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
static __attribute__((noinline)) void tvmk_cm_1x1_full(const int32_t *xs, int8_t *out,
                                                       const struct tvmk_conv2d_s8_params *p,
                                                       int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 1, 0);
}

static __attribute__((noinline)) void tvmk_cm_1x1_clamped(const int32_t *xs, int8_t *out,
                                                          const struct tvmk_conv2d_s8_params *p,
                                                          int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 0, 0);
}

static __attribute__((noinline)) void tvmk_cm_1x1_mixed(const int32_t *xs, int8_t *out,
                                                        const struct tvmk_conv2d_s8_params *p,
                                                        int32_t quads)
{
    tvmk_cm_1x1_channels(xs, out, p, quads, 0, 1);
}

/* Whether some channel's record has a right shift of 0. */
static int tvmk_cm_1x1_mixed_shifts(const struct tvmk_conv2d_s8_params *p, int32_t quads)
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

int32_t tvmk_cm_conv1x1_s8(const int8_t *X, int8_t *Y, const struct tvmk_conv2d_s8_params *p)
{
    const int32_t quads = (p->C + 3) / 4;
    int32_t *xs = (int32_t *)p->scratch;
    const int full = p->activation_min == -128 && p->activation_max == 127;
    int mixed;

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
