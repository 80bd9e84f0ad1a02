/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: DEPTHWISE_CONV_2D int8 on a Cortex-M55, one channel at a
 * time through an int32 plane in the scratch (tvmk_cm.h), eight outputs per pass.
 *
 * Each channel of the input is gathered (VLDRB gather, four pixels C bytes apart per
 * instruction) into the plane, whose padding holds the input's zero point. Once per call,
 * the address of every output's window (its top-left plane element) is laid out in the
 * scratch, in the output's order, so a pass takes eight consecutive outputs whatever the
 * width, the stride or the row they are in: two vectors of window addresses, then per tap
 * one VLDRW gather (vector of addresses plus the tap's column, an immediate) and one VMLA
 * by the tap, a scalar, per four outputs, the addresses moving a plane row per filter row.
 * The channel's bias is folded with input_offset times the sum of its taps (sum(w * x) +
 * bias + input_offset * sum(w) is TFLM's accumulator over a window whose padding holds the
 * zero point, both wrapping modulo 2^32), so raw inputs are multiplied. Requantization is
 * TFLM's MultiplyByQuantizedMultiplier exactly: the left shift, VQRDMULH (its saturating
 * rounding doubling high multiply), and the rounding division by 2^right with ties away
 * from zero (one less for a negative value, saturating, then VRSHL's rounding shift, which
 * rounds ties up). Four outputs are stored C bytes apart by one VSTRB scatter, predicated
 * (VCTP) on the last pass. 3x3 and 7x7 filters have their own loops (a constant filter
 * width: each filter row unrolled).
 *
 * Counted in instructions (QEMU -icount, the measure) the gathers cost one each;
 * on silicon a gather moves one element a beat, so this path's advantage is smaller there.
 *
 * Without MVE (every other core) the function is not reached: the hooks decline the
 * path there, and this entry point returns TVM_DEVICE_ERR_INVALID.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

/* What one channel's loops read. */
struct tvmk_cm_mve_dw {
    const uint32_t *windows; /* per output (flattened), its window's first plane element */
    int32_t row;             /* a plane row, in bytes */
    const int32_t *w;        /* the channel's k x k taps */
    int32_t bias;            /* folded with input_offset times the sum of the taps */
    int32_t multiplier, left, right;
    int32_t output_offset, activation_min, activation_max;
    int8_t *output; /* the channel's first output; outputs are C bytes apart */
    int32_t C, outputs;
};

/* One channel's requantization, as vectors and scalars held in registers. */
struct tvmk_cm_mve_q {
    int32x4_t lo, hi;
    int32_t multiplier, left, neg_right, rounds, output_offset;
};

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators, then the offset and clamp. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mve_requantize(int32x4_t acc, const struct tvmk_cm_mve_q q)
{
    int32x4_t x = vqrdmulhq_n_s32(vshlq_r_s32(acc, q.left), q.multiplier);
    x = vqaddq_s32(x, vmulq_n_s32(vshrq_n_s32(x, 31), q.rounds));
    x = vaddq_n_s32(vrshlq_n_s32(x, q.neg_right), q.output_offset);
    return vminq_s32(vmaxq_s32(x, q.lo), q.hi);
}

/* One row of a k x k filter's taps (wr) for eight outputs, whose windows' addresses
 * then move on to the next row. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_taps(int32x4_t *a0, int32x4_t *a1, uint32x4_t *p0, uint32x4_t *p1,
                 const int32_t *wr, uint32_t row, const int32_t k)
{
#pragma GCC unroll 7
    for (int32_t kx = 0; kx < k; kx++) {
        *a0 = vmlaq_n_s32(*a0, vldrwq_gather_base_s32(*p0, 4 * kx), wr[kx]);
        *a1 = vmlaq_n_s32(*a1, vldrwq_gather_base_s32(*p1, 4 * kx), wr[kx]);
    }
    *p0 = vaddq_n_u32(*p0, row);
    *p1 = vaddq_n_u32(*p1, row);
}

/* One channel's outputs for a k x k filter (a constant where inlined), eight at a time in
 * the output's order: two vectors of their windows' addresses, each tap one gather load
 * (the tap's column an immediate offset) and one VMLA by the tap per four outputs. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_dw_channel(const struct tvmk_cm_mve_dw *d, const int32_t k)
{
    int32_t w[49];
    const uint32_t *win = d->windows;
    const uint32_t row = (uint32_t)d->row;
    const int32_t C = d->C;
    const int32_t bias = d->bias;
    const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)C);
    const struct tvmk_cm_mve_q q = {vdupq_n_s32(d->activation_min),
                                    vdupq_n_s32(d->activation_max), d->multiplier, d->left,
                                    -d->right, d->right > 0, d->output_offset};
    int8_t *out = d->output;
#pragma GCC unroll 49
    for (int32_t t = 0; t < k * k; t++) {
        w[t] = d->w[t];
    }
    int32_t left = d->outputs;
    for (;; left -= 8) {
        uint32x4_t p0 = vldrwq_u32(win);
        uint32x4_t p1 = vldrwq_u32(win + 4);
        int32x4_t a0 = vdupq_n_s32(bias);
        int32x4_t a1 = a0;
        const int32_t *wr = w;
        /* the rows of a 3x3 filter unrolled; of a 7x7, a loop (the code's size) */
        if (k == 3) {
#pragma GCC unroll 3
            for (int32_t ky = 0; ky < k; ky++) {
                tvmk_cm_mve_taps(&a0, &a1, &p0, &p1, wr + ky * k, row, k);
            }
        } else {
#pragma GCC unroll 1
            for (int32_t ky = 0; ky < k; ky++) {
                tvmk_cm_mve_taps(&a0, &a1, &p0, &p1, wr + ky * k, row, k);
            }
        }
        a0 = tvmk_cm_mve_requantize(a0, q);
        a1 = tvmk_cm_mve_requantize(a1, q);
        if (left < 8) { /* the last, partial: predicated stores */
            vstrbq_scatter_offset_p_s32(out, scatter, a0, vctp32q((uint32_t)left));
            vstrbq_scatter_offset_p_s32(out + 4 * C, scatter, a1,
                                        vctp32q((uint32_t)(left > 4 ? left - 4 : 0)));
            return;
        }
        vstrbq_scatter_offset_s32(out, scatter, a0);
        vstrbq_scatter_offset_s32(out + 4 * C, scatter, a1);
        out += 8 * C;
        win += 8;
        if (left == 8) {
            return;
        }
    }
}

#define TVMK_CM_MVE_DW_VARIANT(K)                                                       \
    static __attribute__((noinline)) void tvmk_cm_mve_dw_##K##x##K(                    \
        const struct tvmk_cm_mve_dw *d)                                                 \
    {                                                                                   \
        tvmk_cm_mve_dw_channel(d, K);                                                   \
    }

TVMK_CM_MVE_DW_VARIANT(3)
TVMK_CM_MVE_DW_VARIANT(7)

/* Channel c of one image (x: its first byte) into the plane's interior: plane rows
 * r0..r1, columns q0..q1, four pixels (C bytes apart) a gather. */
static void tvmk_cm_mve_fill(int32_t *plane, int32_t rs, const int8_t *x, int32_t r0,
                             int32_t r1, int32_t q0, int32_t q1,
                             const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const uint32x4_t gather = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)p->C);
    const int32_t step = 4 * p->C;
    const int8_t *src_row = x + ((r0 - p->pad_top) * p->W + (q0 - p->pad_left)) * p->C;
    int32_t *dst_row = plane + r0 * rs + q0;
    for (int32_t r = r0; r < r1; r++) {
        const int8_t *src = src_row;
        int32_t *dst = dst_row;
        for (int32_t n = q1 - q0; n > 0; n -= 4) {
            const mve_pred16_t pred = vctp32q((uint32_t)n);
            vstrwq_p_s32(dst, vldrbq_gather_offset_z_s32(src, gather, pred), pred);
            src += step;
            dst += 4;
        }
        src_row += p->W * p->C;
        dst_row += rs;
    }
}

static int32_t tvmk_cm_mve_min(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* Each output's window: the address of its first plane element; the vector's lanes past
 * the last output take the plane's first. */
static void tvmk_cm_mve_windows(uint32_t *windows, const int32_t *plane, int32_t rs,
                                const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t outputs = p->OH * p->OW;
    const int32_t lanes = (outputs + 7) / 8 * 8;
    int32_t i = 0;
    for (int32_t oy = 0; oy < p->OH; oy++) {
        for (int32_t ox = 0; ox < p->OW; ox++) {
            windows[i++] = (uint32_t)(uintptr_t)(plane + oy * p->stride_h * rs + ox * p->stride_w);
        }
    }
    for (; i < lanes; i++) {
        windows[i] = (uint32_t)(uintptr_t)plane;
    }
}

int32_t tvmk_cm_depthwise_conv2d_s8_mve(const int8_t *input, const int8_t *filter,
                                        const int32_t *bias, int8_t *output,
                                        const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t k = p->KH;
    const int32_t s = p->stride_h;
    const int32_t rows = (p->OH - 1) * s + k;
    const int32_t rs = (p->OW - 1) * s + k;
    const int32_t plane_words = rows * rs;
    const int32_t lanes = (p->OH * p->OW + 7) / 8 * 8;
    const int32_t r1 = tvmk_cm_mve_min(p->pad_top + p->H, rows);
    const int32_t q1 = tvmk_cm_mve_min(p->pad_left + p->W, rs);
    int32_t *plane = (int32_t *)p->scratch;
    uint32_t *windows = (uint32_t *)(plane + plane_words);
    int32_t *w = (int32_t *)(windows + lanes);
    struct tvmk_cm_mve_dw d;

    if (!((k == 3 || k == 7) && p->KW == k && (s == 1 || s == 2) &&
          p->stride_w == s && p->mult == 1 && p->dil_h == 1 && p->dil_w == 1) ||
        ((uintptr_t)p->scratch & 3) != 0 ||
        (int64_t)4 * (plane_words + lanes + k * k) > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    /* The padding: the input's zero point, which the folded bias accounts for. */
    for (int32_t i = 0; i < plane_words; i++) {
        plane[i] = -p->input_offset;
    }
    tvmk_cm_mve_windows(windows, plane, rs, p);
    d.windows = windows;
    d.row = 4 * rs;
    d.w = w;
    d.output_offset = p->output_offset;
    d.activation_min = p->activation_min;
    d.activation_max = p->activation_max;
    d.C = p->C;
    d.outputs = p->OH * p->OW;
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = input + n * p->H * p->W * p->C;
        for (int32_t c = 0; c < p->C; c++) {
            const int32_t shift = p->output_shift[c];
            uint32_t sum = 0;
            tvmk_cm_mve_fill(plane, rs, x + c, p->pad_top, r1, p->pad_left, q1, p);
            for (int32_t t = 0; t < k * k; t++) {
                w[t] = filter[t * p->C + c];
                sum += (uint32_t)w[t];
            }
            d.bias = (int32_t)((bias != NULL ? (uint32_t)bias[c] : 0u) +
                               (uint32_t)p->input_offset * sum);
            d.multiplier = p->output_multiplier[c];
            d.left = shift > 0 ? shift : 0;
            d.right = shift > 0 ? 0 : -shift;
            d.output = output + n * p->OH * p->OW * p->C + c;
            if (k == 3) {
                tvmk_cm_mve_dw_3x3(&d);
            } else {
                tvmk_cm_mve_dw_7x7(&d);
            }
        }
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_depthwise_conv2d_s8_mve(const int8_t *input, const int8_t *filter,
                                        const int32_t *bias, int8_t *output,
                                        const struct tvmk_depthwise_conv2d_s8_params *p)
{
    (void)input;
    (void)filter;
    (void)bias;
    (void)output;
    (void)p;
    return TVM_DEVICE_ERR_INVALID; /* no MVE: the hooks declined this path */
}

#endif
