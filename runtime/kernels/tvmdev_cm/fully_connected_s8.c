/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: FULLY_CONNECTED int8 (weights per tensor or per output channel, zero point 0),
 * the DSP path (SMLAD; on a core with Helium the entry point calls the MVE path,
 * fully_connected_s8_mve.c). The weights stay TFLM's (out_size rows of in_size int8).
 * kernel_sums holds per row its bias plus input_offset times the sum of its weights,
 * folded at generation time (tvmdev/plan/hooks/tvmdev_cm_fc.py), so the raw inputs are
 * multiplied. Each input row is widened once per call into the scratch, per four inputs
 * two words: (x[4j], x[4j + 2]) and (x[4j + 1], x[4j + 3]), the order SXTB16 splits a
 * word of four weights into (and, rotated by 8, its odd bytes), so the weights need two
 * SXTB16 and no reordering. Four rows at a time share each input load: per four columns,
 * one LDRD of the input and per row an LDR, two SXTB16 and two SMLADs. The last in_size % 4
 * columns and out_size % 4 rows are multiplied in C. Requantization is TFLM's
 * MultiplyByQuantizedMultiplier by SMMULR (tvmk_cm_arith.h), which the generator proved
 * exact for the layer.
 */
#include <string.h>

#include "tvmk_cm.h"
#include "tvmk_cm_arith.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define TVMK_CM_FC_MVE 1
#else
#define TVMK_CM_FC_MVE 0
#endif

#if !TVMK_CM_FC_MVE
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMK_CM_FC_EVEN(v) ((int32_t)__sxtb16((uint32_t)(v)))
#define TVMK_CM_FC_ODD(v) ((int32_t)__sxtb16(((uint32_t)(v) >> 8) | ((uint32_t)(v) << 24)))
#else
/* SXTB16 in C: bytes 0 and 2 sign-extended to int16 halves. */
static inline int32_t tvmk_cm_fc_sxtb16(uint32_t v)
{
    const uint32_t lo = (uint32_t)(int32_t)(int8_t)(v & 0xFFu) & 0xFFFFu;
    const uint32_t hi = (uint32_t)(int32_t)(int8_t)((v >> 16) & 0xFFu) << 16;
    return (int32_t)(lo | hi);
}
#define TVMK_CM_FC_EVEN(v) tvmk_cm_fc_sxtb16((uint32_t)(v))
#define TVMK_CM_FC_ODD(v) tvmk_cm_fc_sxtb16((uint32_t)(v) >> 8)
#endif

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

/* Row r's output from its accumulator: TFLM's requantization with the row's (or the
 * tensor's) multiplier and shift, the offset, the clamp. */
static inline int8_t tvmk_cm_fc_out(int32_t acc, int32_t r,
                                    const struct tvmk_fully_connected_s8_params *p)
{
    struct tvmk_cm_requant q;
    const int per_row = p->channel_multiplier != NULL;
    tvmk_cm_requant_init(&q, per_row ? p->channel_multiplier[r] : p->output_multiplier,
                         per_row ? p->channel_shift[r] : p->output_shift, p->output_offset,
                         p->activation_min, p->activation_max);
    return tvmk_cm_requantize(acc, &q);
}

/* One input row x (widened into xs) times every weight row, into out. */
static void tvmk_cm_fc_batch(const int8_t *x, const int32_t *xs, const int8_t *weights,
                             int8_t *out, const struct tvmk_fully_connected_s8_params *p)
{
    const int32_t C = p->in_size, M = p->out_size, quads = C / 4;
    int32_t r = 0;
    for (; r + 4 <= M; r += 4) {
        const int8_t *w = weights + r * C;
        int32_t acc[4];
        memcpy(acc, p->kernel_sums + r, sizeof acc);
        tvmk_cm_fc_rows4(xs, w, C, quads, acc);
        for (int32_t k = 0; k < 4; k++) {
            for (int32_t c = 4 * quads; c < C; c++) { /* the last C % 4 columns */
                acc[k] += (int32_t)w[k * C + c] * (int32_t)x[c];
            }
            out[r + k] = tvmk_cm_fc_out(acc[k], r + k, p);
        }
    }
    for (; r < M; r++) { /* the last M % 4 rows, one at a time */
        const int8_t *w = weights + r * C;
        int32_t acc = p->kernel_sums[r];
        for (int32_t j = 0; j < quads; j++) {
            acc = tvmk_cm_fc_word(w + 4 * j, xs[2 * j], xs[2 * j + 1], acc);
        }
        for (int32_t c = 4 * quads; c < C; c++) {
            acc += (int32_t)w[c] * (int32_t)x[c];
        }
        out[r] = tvmk_cm_fc_out(acc, r, p);
    }
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
    if (p->kernel_sums == NULL || p->weights_offset != 0 || p->scratch == NULL ||
        ((uintptr_t)p->scratch & 3) != 0 || (int64_t)(p->in_size / 4) * 8 > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    for (int32_t b = 0; b < p->batch; b++) {
        const int8_t *x = input + b * p->in_size;
        tvmk_cm_fc_widen((int32_t *)p->scratch, x, p->in_size / 4);
        tvmk_cm_fc_batch(x, (const int32_t *)p->scratch, weights, output + b * p->out_size, p);
    }
    return TVM_DEVICE_OK;
#endif
}
