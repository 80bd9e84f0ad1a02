/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: FULLY_CONNECTED int8 (weights per tensor or per output
 * channel, zero point 0) on a Cortex-M55 (tvmk_cm.h). Four rows at a time: per sixteen
 * columns one VLDRB of the input and, per row, one VLDRB of its weights (TFLM's rows: no
 * layout) and one VMLADAVA, in a low-overhead loop (WLS/LE: ten instructions per 64
 * multiplies), the accumulators starting at kernel_sums (each row's bias plus
 * input_offset times the sum of its weights, folded at generation time:
 * tvmdev/plan/hooks/tvmdev_cm_fc.py), so no VADDVA of the input or the weights at run
 * time. The last in_size % 16 columns take predicated loads (the input's other lanes
 * zero). The four accumulators are requantized in one vector, TFLM's
 * MultiplyByQuantizedMultiplier exactly (as depthwise_conv2d_s8_mve.c: VSHL, VQRDMULH, the
 * fix-up that rounds a negative tie away from zero, VRSHL), and stored as four bytes. The
 * last out_size % 4 rows: one at a time, the same arithmetic in one lane.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

/* What the loops read, copied out of the params (a store through an int8 pointer would
 * otherwise make the compiler read them again). */
struct tvmk_cm_fc_mve {
    const int8_t *x;
    const int32_t *ks, *mult, *shift; /* mult, shift: NULL for one of the tensor's */
    int32_t C, full; /* full: the columns in whole vectors of sixteen */
    mve_pred16_t tail; /* the last C % 16 columns */
    int32_t output_offset, activation_min, activation_max, multiplier, output_shift;
};

/* The four accumulators, from ks (four words, then past them), of the rows at w0 and the
 * next three, C bytes apart, over the `full` whole vectors: per vector one VLDRB of the
 * input, four of the weights and four VMLADAVAs (their accumulators even registers), in
 * a low-overhead loop; the pointers are left past the last whole vector. */
#define TVMK_CM_FC_MVE_LOOP                                                              \
    "ldrd %[a0], %[a1], [%[ks]], #8\n\t"                                                 \
    "ldrd %[a2], %[a3], [%[ks]], #8\n\t"                                                 \
    "add %[w1], %[w0], %[C]\n\t"                                                         \
    "add %[w2], %[w1], %[C]\n\t"                                                         \
    "add %[w3], %[w2], %[C]\n\t"                                                         \
    "wls lr, %[n], 2f\n\t"                                                               \
    "1:\n\t"                                                                             \
    "vldrb.8 q0, [%[x]], #16\n\t"                                                        \
    "vldrb.8 q1, [%[w0]], #16\n\t"                                                       \
    "vmladava.s8 %[a0], q1, q0\n\t"                                                      \
    "vldrb.8 q2, [%[w1]], #16\n\t"                                                       \
    "vmladava.s8 %[a1], q2, q0\n\t"                                                      \
    "vldrb.8 q3, [%[w2]], #16\n\t"                                                       \
    "vmladava.s8 %[a2], q3, q0\n\t"                                                      \
    "vldrb.8 q1, [%[w3]], #16\n\t"                                                       \
    "vmladava.s8 %[a3], q1, q0\n\t"                                                      \
    "le lr, 1b\n\t"                                                                      \
    "2:\n\t"

/* The dot products of rows w0 .. w0 + 3C with the input, plus their kernel_sums (*ks,
 * stepped past them), as one vector. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_fc_mve_dots(const struct tvmk_cm_fc_mve *d, const int8_t *w0, const int32_t **ks)
{
    register int32_t a0 __asm__("r4");
    register int32_t a1 __asm__("r6");
    register int32_t a2 __asm__("r8");
    register int32_t a3 __asm__("r10");
    const int8_t *x = d->x, *w1, *w2, *w3;
    int32x4_t acc;
    __asm__ volatile(TVMK_CM_FC_MVE_LOOP
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3),
                       [x] "+r"(x), [w0] "+r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),
                       [w3] "=&r"(w3), [ks] "+r"(*ks)
                     : [n] "r"(d->full), [C] "r"(d->C)
                     : "lr", "q0", "q1", "q2", "q3", "memory");
    if (d->tail != 0) { /* the last C % 16 columns: the input's other lanes zero */
        const int8x16_t xv = vldrbq_z_s8(x, d->tail);
        a0 = vmladavaq_s8(a0, vldrbq_z_s8(w0, d->tail), xv);
        a1 = vmladavaq_s8(a1, vldrbq_z_s8(w1, d->tail), xv);
        a2 = vmladavaq_s8(a2, vldrbq_z_s8(w2, d->tail), xv);
        a3 = vmladavaq_s8(a3, vldrbq_z_s8(w3, d->tail), xv);
    }
    __asm__("vmov %q0[2], %q0[0], %1, %3\n\t"
            "vmov %q0[3], %q0[1], %2, %4"
            : "=w"(acc)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3));
    return acc;
}

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators by their multipliers and
 * shifts, then the offset and the clamp. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_fc_mve_requantize(int32x4_t x, int32x4_t mult, int32x4_t shift, int32_t offset,
                          int32x4_t lo, int32x4_t hi)
{
    const int32x4_t zero = vdupq_n_s32(0);
    x = vqrdmulhq_s32(vshlq_s32(x, vmaxq_s32(shift, zero)), mult);
    /* -1 where x < 0 and the shift is a right shift: a negative tie rounds away from 0 */
    x = vqaddq_s32(x, vandq_s32(vshrq_n_s32(x, 31), vshrq_n_s32(shift, 31)));
    x = vaddq_n_s32(vrshlq_s32(x, vminq_s32(shift, zero)), offset);
    return vminq_s32(vmaxq_s32(x, lo), hi);
}

/* The whole groups of four rows of one input row (d->x), into out; `per_row`: a
 * constant where inlined. Returns past the last group's outputs. */
static inline __attribute__((always_inline)) void
tvmk_cm_fc_mve_groups(const struct tvmk_cm_fc_mve *d, const int8_t *w, int8_t *out,
                      int32_t groups, const int per_row)
{
    const int32_t step = 4 * d->C, offset = d->output_offset;
    const int32x4_t lo = vdupq_n_s32(d->activation_min), hi = vdupq_n_s32(d->activation_max);
    const int32_t *ks = d->ks, *mult = d->mult, *shift = d->shift;
    const int32x4_t m1 = vdupq_n_s32(d->multiplier), s1 = vdupq_n_s32(d->output_shift);
    for (int32_t g = 0; g < groups; g++, w += step, out += 4) {
        const int32x4_t acc = tvmk_cm_fc_mve_dots(d, w, &ks);
        int32x4_t m = m1, s = s1;
        if (per_row) {
            m = vldrwq_s32(mult);
            s = vldrwq_s32(shift);
            mult += 4;
            shift += 4;
        }
        vstrbq_s32(out, tvmk_cm_fc_mve_requantize(acc, m, s, offset, lo, hi));
    }
}

static __attribute__((noinline)) void
tvmk_cm_fc_mve_per_row(const struct tvmk_cm_fc_mve *d, const int8_t *w, int8_t *out,
                       int32_t groups)
{
    tvmk_cm_fc_mve_groups(d, w, out, groups, 1);
}

static __attribute__((noinline)) void
tvmk_cm_fc_mve_per_tensor(const struct tvmk_cm_fc_mve *d, const int8_t *w, int8_t *out,
                          int32_t groups)
{
    tvmk_cm_fc_mve_groups(d, w, out, groups, 0);
}

/* The last M % 4 rows (n of them, from row r): one by one, a whole dot product each,
 * the same requantization in lane 0. */
static void tvmk_cm_fc_mve_rest(const struct tvmk_cm_fc_mve *d, const int8_t *weights,
                                int8_t *out, int32_t r, int32_t n)
{
    const int32x4_t lo = vdupq_n_s32(d->activation_min), hi = vdupq_n_s32(d->activation_max);
    for (int32_t k = r; k < r + n; k++) {
        const int8_t *x = d->x, *w = weights + k * d->C;
        int32_t acc = d->ks[k];
        for (int32_t j = 0; j < d->full; j++, x += 16, w += 16) {
            acc = vmladavaq_s8(acc, vldrbq_s8(w), vldrbq_s8(x));
        }
        if (d->tail != 0) {
            acc = vmladavaq_s8(acc, vldrbq_z_s8(w, d->tail), vldrbq_z_s8(x, d->tail));
        }
        const int32x4_t v = tvmk_cm_fc_mve_requantize(
            vdupq_n_s32(acc), vdupq_n_s32(d->mult != NULL ? d->mult[k] : d->multiplier),
            vdupq_n_s32(d->shift != NULL ? d->shift[k] : d->output_shift), d->output_offset,
            lo, hi);
        out[k] = (int8_t)vgetq_lane_s32(v, 0);
    }
}

int32_t tvmk_cm_fully_connected_s8_mve(const int8_t *input, const int8_t *weights,
                                       int8_t *output,
                                       const struct tvmk_fully_connected_s8_params *p)
{
    struct tvmk_cm_fc_mve d;
    const int32_t groups = p->out_size / 4;
    if (p->kernel_sums == NULL || p->weights_offset != 0) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    d.ks = p->kernel_sums;
    d.mult = p->channel_multiplier;
    d.shift = p->channel_multiplier != NULL ? p->channel_shift : NULL;
    d.C = p->in_size;
    d.full = p->in_size / 16;
    d.tail = p->in_size % 16 != 0 ? vctp8q((uint32_t)(p->in_size % 16)) : 0;
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    d.multiplier = p->output_multiplier;
    d.output_shift = p->output_shift;
    for (int32_t b = 0; b < p->batch; b++) {
        int8_t *out = output + b * p->out_size;
        d.x = input + b * p->in_size;
        if (d.mult != NULL) {
            tvmk_cm_fc_mve_per_row(&d, weights, out, groups);
        } else {
            tvmk_cm_fc_mve_per_tensor(&d, weights, out, groups);
        }
        tvmk_cm_fc_mve_rest(&d, weights, out, 4 * groups, p->out_size % 4);
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_fully_connected_s8_mve(const int8_t *input, const int8_t *weights,
                                       int8_t *output,
                                       const struct tvmk_fully_connected_s8_params *p)
{
    (void)input;
    (void)weights;
    (void)output;
    (void)p;
    return TVM_DEVICE_ERR_INVALID; /* no MVE: the hooks declined this path */
}

#endif
