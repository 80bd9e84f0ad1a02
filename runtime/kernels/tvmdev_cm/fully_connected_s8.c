/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: FULLY_CONNECTED int8 (weights per tensor or per output channel, zero point 0),
 * the DSP path (SMLAD; on a core with Helium the entry point calls the MVE path,
 * fully_connected_s8_mve.c). The weights stay TFLM's (out_size rows of in_size int8).
 * kernel_sums, laid out at generation time (tvmdev/plan/hooks/tvmdev_cm_fc.py): per row
 * its bias plus input_offset times the sum of its weights, so the raw inputs are
 * multiplied; then per row a requantization record (multiplier, left shift + 1, c, right
 * shift); then a word, 1 when some row's right shift is 0. Each input row is widened once
 * per call into the scratch, per four inputs two words: (x[4j], x[4j + 2]) and (x[4j + 1],
 * x[4j + 3]), the order SXTB16 splits a word of four weights into (and, rotated by 8, its
 * odd bytes), so the weights need two SXTB16 and no reordering. Four rows at a time share
 * each input load: per four columns, one LDRD of the input and per row an LDR, two SXTB16
 * and two SMLADs (21 instructions, 16 multiplies). The last in_size % 4 columns and
 * out_size % 4 rows are multiplied in C. Requantization is TFLM's
 * MultiplyByQuantizedMultiplier from the row's record (tvmk_cm_fc_out), which the
 * generator proved exact for the layer.
 */
#include <string.h>

#include "tvmk_cm.h"
#include "tvmk_cm_1x1.h"
#include "tvmk_cm_arith.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define TVMK_CM_FC_MVE 1
#else
#define TVMK_CM_FC_MVE 0
#endif

#if !TVMK_CM_FC_MVE
/* SXTB16 of a word and of it rotated by 8 (TVMK_CM_EVEN, TVMK_CM_ODD: the 1x1's) */
#define TVMK_CM_FC_EVEN(v) TVMK_CM_EVEN(v)
#define TVMK_CM_FC_ODD(v) TVMK_CM_ODD(v)

/* The row's `quads` whole words of four inputs as pairs of words (the even bytes, then the
 * odd ones). */
static void tvmk_cm_fc_widen(int32_t *xs, const int8_t *x, int32_t quads)
{
    for (int32_t j = 0; j < quads; j++, x += 4, xs += 2) {
        int32_t v;
        memcpy(&v, x, sizeof v);
        xs[0] = TVMK_CM_FC_EVEN(v);
        xs[1] = TVMK_CM_FC_ODD(v);
    }
}

/* One row's word of four weights at w, times the widened inputs xe and xo, into acc. */
static inline int32_t tvmk_cm_fc_word(const int8_t *w, int32_t xe, int32_t xo, int32_t acc)
{
    int32_t v;
    memcpy(&v, w, sizeof v);
    return TVMK_CM_SMLAD(xo, TVMK_CM_FC_ODD(v), TVMK_CM_SMLAD(xe, TVMK_CM_FC_EVEN(v), acc));
}

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* Four columns of rows 0 to 3 (rows 1 and 3 `c` bytes past p0 and p2, loaded first: the
 * loads of rows 0 and 2 step the pointers): 21 instructions, 16 multiplies. */
#define TVMK_CM_FC_QUAD                                                                  \
    "ldrd %[xe], %[xo], [%[xs]], #8\n\t"                                                 \
    "ldr %[v], [%[p0], %[c]]\n\t"                                                        \
    "sxtb16 %[o], %[v], ror #8\n\t"                                                      \
    "sxtb16 %[v], %[v]\n\t"                                                              \
    "smlad %[a1], %[xe], %[v], %[a1]\n\t"                                                \
    "smlad %[a1], %[xo], %[o], %[a1]\n\t"                                                \
    "ldr %[v], [%[p0]], #4\n\t"                                                          \
    "sxtb16 %[o], %[v], ror #8\n\t"                                                      \
    "sxtb16 %[v], %[v]\n\t"                                                              \
    "smlad %[a0], %[xe], %[v], %[a0]\n\t"                                                \
    "smlad %[a0], %[xo], %[o], %[a0]\n\t"                                                \
    "ldr %[v], [%[p2], %[c]]\n\t"                                                        \
    "sxtb16 %[o], %[v], ror #8\n\t"                                                      \
    "sxtb16 %[v], %[v]\n\t"                                                              \
    "smlad %[a3], %[xe], %[v], %[a3]\n\t"                                                \
    "smlad %[a3], %[xo], %[o], %[a3]\n\t"                                                \
    "ldr %[v], [%[p2]], #4\n\t"                                                          \
    "sxtb16 %[o], %[v], ror #8\n\t"                                                      \
    "sxtb16 %[v], %[v]\n\t"                                                              \
    "smlad %[a2], %[xe], %[v], %[a2]\n\t"                                                \
    "smlad %[a2], %[xo], %[o], %[a2]\n\t"
#define TVMK_CM_FC_OPERANDS                                                              \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xs] "+r"(xs),           \
        [p0] "+r"(p0), [p2] "+r"(p2), [xe] "=&r"(xe), [xo] "=&r"(xo), [v] "=&r"(v),      \
        [o] "=&r"(o)
#endif

/* Four rows' accumulators (in place) over the `quads` widened words of xs, the rows' int8
 * weights from w, C bytes apart. */
static inline __attribute__((always_inline)) void
tvmk_cm_fc_rows4(const int32_t *xs, const int8_t *w, int32_t C, int32_t quads, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    const int8_t *p0 = w, *p2 = w + 2 * C;
    const int32_t *xend = xs + 2 * quads;
    int32_t xe, xo, v, o;
    for (int32_t j = 0; j < (quads & 3); j++) {
        __asm__ volatile(TVMK_CM_FC_QUAD : TVMK_CM_FC_OPERANDS : [c] "r"(C) : "memory");
    }
    if (xs != xend) {
        /* four quads a pass; the end from memory (twelve registers are taken) */
        __asm__ volatile("1:\n\t" TVMK_CM_FC_QUAD TVMK_CM_FC_QUAD TVMK_CM_FC_QUAD
                         TVMK_CM_FC_QUAD "ldr %[v], %[end]\n\t"
                         "cmp %[xs], %[v]\n\t"
                         "bne 1b\n\t"
                         : TVMK_CM_FC_OPERANDS
                         : [c] "r"(C), [end] "m"(xend)
                         : "cc", "memory");
    }
#else
    for (int32_t j = 0; j < quads; j++, xs += 2, w += 4) {
        a0 = tvmk_cm_fc_word(w, xs[0], xs[1], a0);
        a1 = tvmk_cm_fc_word(w + C, xs[0], xs[1], a1);
        a2 = tvmk_cm_fc_word(w + 2 * C, xs[0], xs[1], a2);
        a3 = tvmk_cm_fc_word(w + 3 * C, xs[0], xs[1], a3);
    }
#endif
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* What the loops read, copied out of the params (a store through an int8 pointer would
 * otherwise make the compiler read them again). */
struct tvmk_cm_fc {
    const int32_t *ks, *rec; /* rec: per row, multiplier, left shift + 1, c, right shift */
    int32_t C, M, quads, lo, hi;
};

/* Row r's output from its accumulator and record (tvmdev/plan/hooks/tvmdev_cm_fc.py):
 * SMMULR of the accumulator scaled by 2^(left shift + 1) (exact: proved per layer) is
 * TFLM's doubling high multiply; c is 2^(right - 1) + output_offset * 2^right (the offset
 * alone when right is 0), the rounding and the offset in one add (no overflow, proved),
 * and x >> 31 rounds a negative tie away from zero when right > 0. `full`: the clamp is
 * int8's whole range (one SSAT); `mixed`: some row's right shift is 0. */
static inline __attribute__((always_inline)) int8_t
tvmk_cm_fc_out(int32_t acc, const int32_t *r, int32_t lo, int32_t hi, const int full,
               const int mixed)
{
    const int32_t x = tvmk_cm_smmulr((int32_t)((uint32_t)acc << r[1]), r[0]);
    const int32_t below = mixed ? (x >> 31) & -(int32_t)(r[3] != 0) : x >> 31;
    int32_t v = (x + below + r[2]) >> r[3];
    if (full) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
        return (int8_t)__ssat(v, 8);
#else
        lo = -128;
        hi = 127;
#endif
    }
    v = v < lo ? lo : v;
    return (int8_t)(v > hi ? hi : v);
}

/* The last C % 4 columns of a row w (their inputs raw in x), added to acc. */
static int32_t tvmk_cm_fc_cols(const int8_t *w, const int8_t *x, int32_t from, int32_t C,
                               int32_t acc)
{
    for (int32_t c = from; c < C; c++) {
        acc += (int32_t)w[c] * (int32_t)x[c];
    }
    return acc;
}

/* One input row x (widened into xs) times every weight row, into out; `full` and
 * `mixed` (tvmk_cm_fc_out): constants where it is inlined. */
static inline __attribute__((always_inline)) void
tvmk_cm_fc_rows(const struct tvmk_cm_fc *d, const int8_t *x, const int32_t *xs,
                const int8_t *weights, int8_t *out, const int full, const int mixed)
{
    const int32_t C = d->C, M = d->M, quads = d->quads, lo = d->lo, hi = d->hi;
    const int32_t *rec = d->rec;
    int32_t r = 0;
    for (; r + 4 <= M; r += 4, rec += 16) {
        const int8_t *w = weights + r * C;
        int32_t acc[4];
        memcpy(acc, d->ks + r, sizeof acc);
        tvmk_cm_fc_rows4(xs, w, C, quads, acc);
        if (C % 4 != 0) {
            for (int32_t k = 0; k < 4; k++) {
                acc[k] = tvmk_cm_fc_cols(w + k * C, x, 4 * quads, C, acc[k]);
            }
        }
        out[r] = tvmk_cm_fc_out(acc[0], rec, lo, hi, full, mixed);
        out[r + 1] = tvmk_cm_fc_out(acc[1], rec + 4, lo, hi, full, mixed);
        out[r + 2] = tvmk_cm_fc_out(acc[2], rec + 8, lo, hi, full, mixed);
        out[r + 3] = tvmk_cm_fc_out(acc[3], rec + 12, lo, hi, full, mixed);
    }
    for (; r < M; r++, rec += 4) { /* the last M % 4 rows, one at a time */
        const int8_t *w = weights + r * C;
        int32_t acc = d->ks[r];
        for (int32_t j = 0; j < quads; j++) {
            acc = tvmk_cm_fc_word(w + 4 * j, xs[2 * j], xs[2 * j + 1], acc);
        }
        acc = tvmk_cm_fc_cols(w, x, 4 * quads, C, acc);
        out[r] = tvmk_cm_fc_out(acc, rec, lo, hi, full, mixed);
    }
}

/* Not inlined: one copy of the loops for each clamp, and one for layers with a row whose
 * right shift is 0. */
static __attribute__((noinline)) void tvmk_cm_fc_full(const struct tvmk_cm_fc *d,
                                                      const int8_t *x, const int32_t *xs,
                                                      const int8_t *weights, int8_t *out)
{
    tvmk_cm_fc_rows(d, x, xs, weights, out, 1, 0);
}

static __attribute__((noinline)) void tvmk_cm_fc_clamped(const struct tvmk_cm_fc *d,
                                                         const int8_t *x, const int32_t *xs,
                                                         const int8_t *weights, int8_t *out)
{
    tvmk_cm_fc_rows(d, x, xs, weights, out, 0, 0);
}

static __attribute__((noinline)) void tvmk_cm_fc_mixed(const struct tvmk_cm_fc *d,
                                                       const int8_t *x, const int32_t *xs,
                                                       const int8_t *weights, int8_t *out)
{
    tvmk_cm_fc_rows(d, x, xs, weights, out, 0, 1);
}
#endif /* !TVMK_CM_FC_MVE */

int32_t tvmk_cm_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                   const int32_t *bias, int8_t *output,
                                   const struct tvmk_fully_connected_s8_params *p,
                                   void *resource_handle)
{
    (void)bias; /* folded into kernel_sums */
    (void)resource_handle;
#if TVMK_CM_FC_MVE
    /* Helium: the MVE path (no scratch) */
    return tvmk_cm_fully_connected_s8_mve(input, weights, output, p);
#else
    struct tvmk_cm_fc d;
    int mixed, full;
    if (p->kernel_sums == NULL || p->weights_offset != 0 || p->scratch == NULL ||
        ((uintptr_t)p->scratch & 3) != 0 || (int64_t)(p->in_size / 4) * 8 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    d.ks = p->kernel_sums;
    d.rec = p->kernel_sums + p->out_size;
    d.C = p->in_size;
    d.M = p->out_size;
    d.quads = p->in_size / 4;
    d.lo = p->activation_min;
    d.hi = p->activation_max;
    mixed = d.rec[4 * d.M] != 0;
    full = d.lo == -128 && d.hi == 127;
    for (int32_t b = 0; b < p->batch; b++) {
        const int8_t *x = input + b * d.C;
        int32_t *xs = (int32_t *)p->scratch;
        tvmk_cm_fc_widen(xs, x, d.quads);
        if (mixed) {
            tvmk_cm_fc_mixed(&d, x, xs, weights, output + b * d.M);
        } else if (full) {
            tvmk_cm_fc_full(&d, x, xs, weights, output + b * d.M);
        } else {
            tvmk_cm_fc_clamped(&d, x, xs, weights, output + b * d.M);
        }
    }
    return TVM_DEVICE_OK;
#endif
}
