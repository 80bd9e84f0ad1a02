/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: DEPTHWISE_CONV_2D int8 3x3, 5x5 and 7x7 on a Cortex-M55
 * across channels, eight output channels a vector (tvmk_cm.h).
 *
 * NHWC keeps a pixel's channels together. Per block of eight output channels, the input
 * rows a row of outputs reads are copied, as they are first needed, into a ring of k rows
 * in the scratch, each pixel 8 bytes (the block's channels), whose padding columns and
 * rows hold the input's zero point, so the loops have no bounds checks and every tap's
 * load has a constant offset; the filter is laid out alike (per block, k x k taps of 8
 * bytes). One VLDRB.S16 loads a tap's eight channels widened to int16, and VMULLB/VMULLT
 * multiply them by the filter's into int32 accumulators: the block's channels are kept in
 * the order [0, 4, 1, 5, 2, 6, 3, 7], so that the even lanes are its first four channels
 * and the odd lanes its last four. Two output pixels of a row share each filter load (at
 * stride 1 the compiler also shares the input loads of neighbouring taps). Each channel's
 * bias is folded with input_offset times the sum of its taps (sum(w * x) + bias +
 * input_offset * sum(w) is TFLM's accumulator over a window whose padding holds the zero
 * point, both modulo 2^32). A single input channel with a channel multiplier
 * (person_detect's first layer) is copied into the ring repeated.
 *
 * Requantization is TFLM's MultiplyByQuantizedMultiplier exactly, per channel, four
 * channels a vector: the left shift, VQRDMULH, and the rounding division by 2^right with
 * ties away from zero (one less for a negative value where right > 0, saturating, then
 * VRSHL's rounding shift, which rounds ties up), then the output offset; a saturating
 * narrowing to int16 and the clamp there (the same as TFLM's int32 clamp: its bounds are
 * int8), and a scatter store back into the channels' order. The scratch holds, per block,
 * its folded biases and requantization vectors (160 bytes) and its filter (8 k^2), then
 * the ring. A 3x3 filter's taps are all unrolled; 5x5's and 7x7's rows are a loop.
 *
 * In place (output == input): output row o is written after every input row it covers
 * that rows from o on read is in the ring (each is copied before the first row that reads
 * it), so the output may start at the input's address (kernels.yaml, inplace_keep).
 *
 * The hooks (tvmdev/plan/hooks/tvmdev_cm_mvedw.py) choose this path at generation time;
 * tvmk_cm_dw_mvec_takes is the same rule, and the entry point (depthwise_conv2d_s8.c)
 * calls the plane path (depthwise_conv2d_s8_mve.c) for the layers it does not take.
 */
#include "tvmk_cm.h"

/* tvmdev_cm_mvedw.py's MIN_WORK (taps x outputs per channel) and SCRATCH_MAX */
#define TVMK_CM_MVEC_MIN_WORK 300
#define TVMK_CM_MVEC_SCRATCH_MAX (48 * 1024)

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

#define TVMK_CM_MVEC_PRM 40 /* words per block of 8 channels: 10 vectors */

/* A block's eight channels in the order VMULLB/VMULLT split them: even lanes the first
 * four, odd lanes the last four. */
static const uint16_t tvmk_cm_mvec_order[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/* The lanes (in the block's order) of the block's first n channels that exist. */
static inline __attribute__((always_inline)) mve_pred16_t
tvmk_cm_mvec_lanes(uint16x8_t order, int32_t n)
{
    return vcmphiq_u16(vdupq_n_u16((uint16_t)(n < 8 ? n : 8)), order);
}

/* What one row of outputs reads. */
struct tvmk_cm_mvec_row {
    const int8_t *rows[7]; /* the window's ring rows, at block 0 */
    const int8_t *w;       /* the filter laid out: per block, 9 taps of 8 bytes */
    const int32_t *prm;    /* per block, its 10 vectors */
    int8_t *out;           /* the row's first output */
    int32_t blocks, block_bytes, OC, OW;
    int32_t output_offset;
    int16x8_t lo, hi;
};

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators, per lane's multiplier and
 * shifts (prm: the multiplier, then + 8 the left shift, + 16 minus the right shift,
 * + 24 -1 where the right shift is positive), then the output offset. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mvec_requantize(int32x4_t acc, const int32_t *prm, int32_t output_offset)
{
    int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, vldrwq_s32(prm + 8)), vldrwq_s32(prm));
    x = vqaddq_s32(x, vandq_s32(vshrq_n_s32(x, 31), vldrwq_s32(prm + 24)));
    return vaddq_n_s32(vrshlq_s32(x, vldrwq_s32(prm + 16)), output_offset);
}

/* A pixel's eight outputs of a block (its first four channels in e, the last four in
 * o), clamped, stored in the channels' order; p: the channels present. */
static inline __attribute__((always_inline)) void
tvmk_cm_mvec_store(int8_t *out, int32x4_t e, int32x4_t o, const int32_t *prm,
                   const struct tvmk_cm_mvec_row *r, uint16x8_t order, mve_pred16_t p)
{
    int16x8_t v = vqmovnbq_s32(vdupq_n_s16(0),
                               tvmk_cm_mvec_requantize(e, prm + 8, r->output_offset));
    v = vqmovntq_s32(v, tvmk_cm_mvec_requantize(o, prm + 12, r->output_offset));
    v = vminq_s16(vmaxq_s16(v, r->lo), r->hi);
    vstrbq_scatter_offset_p_s16(out, order, v, p);
}

/* One tap for two output pixels (x: the first's pixel; the second's is S pixels on). */
#define TVMK_CM_MVEC_TAP(x, off, S)                                                     \
    do {                                                                                \
        const int16x8_t wv = vldrbq_s16(w);                                             \
        const int16x8_t x0 = vldrbq_s16((x) + 8 * (off));                               \
        const int16x8_t x1 = vldrbq_s16((x) + 8 * ((off) + (S)));                       \
        w += 8;                                                                         \
        a0e = vaddq_s32(a0e, vmullbq_int_s16(x0, wv));                                  \
        a0o = vaddq_s32(a0o, vmulltq_int_s16(x0, wv));                                  \
        a1e = vaddq_s32(a1e, vmullbq_int_s16(x1, wv));                                  \
        a1o = vaddq_s32(a1o, vmulltq_int_s16(x1, wv));                                  \
        /* one tap at a time, accumulated at once: without, GCC hoists the loads and     \
         * products and spills them */                                                  \
        __asm__ volatile("" : "+w"(a0e), "+w"(a0o), "+w"(a1e), "+w"(a1o));             \
    } while (0)

/* One row of outputs of a 3x3 filter at stride S (a constant where inlined), block by
 * block, two output pixels at a time (the last pair's second, past the row, is not
 * stored). The ring's pixels are 8 bytes (a block's channels), so every tap's load has a
 * constant offset. */
static inline __attribute__((always_inline)) void
tvmk_cm_mvec_row(const struct tvmk_cm_mvec_row *r, const int32_t S)
{
    const uint16x8_t order = vldrhq_u16(tvmk_cm_mvec_order);
    for (int32_t b = 0; b < r->blocks; b++) {
        const int32_t *prm = r->prm + b * TVMK_CM_MVEC_PRM;
        const int8_t *x0r = r->rows[0] + b * r->block_bytes;
        const int8_t *x1r = r->rows[1] + b * r->block_bytes;
        const int8_t *x2r = r->rows[2] + b * r->block_bytes;
        const int8_t *wb = r->w + b * 72;
        const int32x4_t be = vldrwq_s32(prm);
        const int32x4_t bo = vldrwq_s32(prm + 4);
        const mve_pred16_t p = tvmk_cm_mvec_lanes(order, r->OC - 8 * b);
        int8_t *out = r->out + 8 * b;
        for (int32_t ox = 0; ox < r->OW; ox += 2) {
            int32x4_t a0e = be, a0o = bo, a1e = be, a1o = bo;
            const int8_t *w = wb;
            /* the params' vectors at constant offsets from one register (else GCC
             * hoists each address out of the loop and spills it) */
            __asm__("" : "+r"(prm));
            TVMK_CM_MVEC_TAP(x0r, 0, S);
            TVMK_CM_MVEC_TAP(x0r, 1, S);
            TVMK_CM_MVEC_TAP(x0r, 2, S);
            TVMK_CM_MVEC_TAP(x1r, 0, S);
            TVMK_CM_MVEC_TAP(x1r, 1, S);
            TVMK_CM_MVEC_TAP(x1r, 2, S);
            TVMK_CM_MVEC_TAP(x2r, 0, S);
            TVMK_CM_MVEC_TAP(x2r, 1, S);
            TVMK_CM_MVEC_TAP(x2r, 2, S);
            tvmk_cm_mvec_store(out, a0e, a0o, prm, r, order, p);
            if (ox + 1 < r->OW) {
                tvmk_cm_mvec_store(out + r->OC, a1e, a1o, prm, r, order, p);
            }
            out += 2 * r->OC;
            x0r += 16 * S;
            x1r += 16 * S;
            x2r += 16 * S;
        }
    }
}

/* One row of outputs for a K x K filter (5 or 7) at stride S (constants where inlined):
 * as the 3x3's, the filter rows a loop, each row's taps unrolled. */
static inline __attribute__((always_inline)) void
tvmk_cm_mvec_row_k(const struct tvmk_cm_mvec_row *r, const int32_t K, const int32_t S)
{
    const uint16x8_t order = vldrhq_u16(tvmk_cm_mvec_order);
    for (int32_t b = 0; b < r->blocks; b++) {
        const int32_t *prm = r->prm + b * TVMK_CM_MVEC_PRM;
        const int8_t *wb = r->w + b * K * K * 8;
        const int32x4_t be = vldrwq_s32(prm);
        const int32x4_t bo = vldrwq_s32(prm + 4);
        const mve_pred16_t p = tvmk_cm_mvec_lanes(order, r->OC - 8 * b);
        const int32_t at = b * r->block_bytes;
        int8_t *out = r->out + 8 * b;
        for (int32_t ox = 0; ox < r->OW; ox += 2) {
            int32x4_t a0e = be, a0o = bo, a1e = be, a1o = bo;
            const int8_t *w = wb;
            __asm__("" : "+r"(prm));
#pragma GCC unroll 1
            for (int32_t ky = 0; ky < K; ky++) {
                const int8_t *x = r->rows[ky] + at + ox * 8 * S;
#pragma GCC unroll 7
                for (int32_t kx = 0; kx < K; kx++) {
                    TVMK_CM_MVEC_TAP(x, kx, S);
                }
            }
            tvmk_cm_mvec_store(out, a0e, a0o, prm, r, order, p);
            if (ox + 1 < r->OW) {
                tvmk_cm_mvec_store(out + r->OC, a1e, a1o, prm, r, order, p);
            }
            out += 2 * r->OC;
        }
    }
}

#define TVMK_CM_MVEC_VARIANT(name, call)                                                \
    static __attribute__((noinline)) void name(const struct tvmk_cm_mvec_row *r)        \
    {                                                                                   \
        call;                                                                           \
    }

TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_3s1, tvmk_cm_mvec_row(r, 1))
TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_3s2, tvmk_cm_mvec_row(r, 2))
TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_5s1, tvmk_cm_mvec_row_k(r, 5, 1))
TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_5s2, tvmk_cm_mvec_row_k(r, 5, 2))
TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_7s1, tvmk_cm_mvec_row_k(r, 7, 1))
TVMK_CM_MVEC_VARIANT(tvmk_cm_mvec_row_7s2, tvmk_cm_mvec_row_k(r, 7, 2))

/* The scratch this path needs: per block of 8 channels its 10 vectors and k x k taps of
 * 8 bytes, then k ring rows of RW pixels of 8 bytes per block. */
static int32_t tvmk_cm_mvec_scratch(const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t blocks = (p->C * p->mult + 7) / 8;
    const int32_t k = p->KH;
    const int32_t RW = ((p->OW + 1) / 2 * 2 - 1) * p->stride_h + k;
    return blocks * (TVMK_CM_MVEC_PRM * 4 + k * k * 8) + k * blocks * RW * 8;
}

int32_t tvmk_cm_dw_mvec_takes(const struct tvmk_depthwise_conv2d_s8_params *p)
{
    /* the hooks' rule (tvmdev_cm_mvedw.py shape_declined) */
    return (p->KH == 3 || p->KH == 5 || p->KH == 7) && p->KW == p->KH &&
           (p->stride_h == 1 || p->stride_h == 2) &&
           p->stride_w == p->stride_h && p->dil_h == 1 && p->dil_w == 1 &&
           (p->mult == 1 || (p->C == 1 && p->mult <= 16)) &&
           p->KH * p->KW * p->OH * p->OW >= TVMK_CM_MVEC_MIN_WORK &&
           tvmk_cm_mvec_scratch(p) <= TVMK_CM_MVEC_SCRATCH_MAX;
}

/* One ring row (slot): per block, RW pixels of 8 bytes in the block's order; input row
 * `src` (NULL: a padding row) from column pl on, the rest the zero point. */
static void tvmk_cm_mvec_fill(int8_t *slot, const int8_t *src, int32_t RW, int32_t blocks,
                              const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t OC = p->C * p->mult;
    const int8x16_t zp = vdupq_n_s8((int8_t)(-p->input_offset));
    const uint16x8_t order = vldrhq_u16(tvmk_cm_mvec_order);
    const int32_t q0 = p->pad_left;
    const int32_t q1 = src == NULL ? q0 : (RW < q0 + p->W ? RW : q0 + p->W);
    for (int32_t b = 0; b < blocks; b++) {
        int8_t *dst = slot + b * RW * 8;
        const mve_pred16_t pred = tvmk_cm_mvec_lanes(order, OC - 8 * b);
        int32_t q = 0;
        for (; q < q0; q++) {
            vstrbq_p_s8(dst + 8 * q, zp, vctp8q(8));
        }
        if (p->mult == 1) {
            const int8_t *x = src + 8 * b;
            for (; q < q1; q++, x += OC) {
                vstrbq_s16(dst + 8 * q, vldrbq_gather_offset_z_s16(x, order, pred));
            }
        } else { /* one input channel, repeated once per output channel */
            for (; q < q1; q++) {
                vstrbq_p_s8(dst + 8 * q, vdupq_n_s8(src[q - q0]), vctp8q(8));
            }
        }
        for (; q < RW; q++) {
            vstrbq_p_s8(dst + 8 * q, zp, vctp8q(8));
        }
    }
}

/* The filter per block, its 9 taps of 8 bytes in the block's order (zeros past OC), and
 * per block the folded biases (channels 0-3, 4-7), then the multipliers, left shifts,
 * minus the right shifts and the rounding fix-up's masks, each as channels 0-3 and 4-7. */
static void tvmk_cm_mvec_layout(int32_t *prm, int8_t *wl, const int8_t *filter,
                                const int32_t *bias,
                                const struct tvmk_depthwise_conv2d_s8_params *p,
                                int32_t blocks)
{
    const int32_t OC = p->C * p->mult, taps = p->KH * p->KW;
    const uint16x8_t order = vldrhq_u16(tvmk_cm_mvec_order);
    for (int32_t b = 0; b < blocks; b++) {
        const mve_pred16_t pred = tvmk_cm_mvec_lanes(order, OC - 8 * b);
        int8_t *wb = wl + b * taps * 8;
        int32_t *q = prm + b * TVMK_CM_MVEC_PRM;
        int16x8_t sum = vdupq_n_s16(0); /* at most 49 x 128: int16 holds it */
        for (int32_t t = 0; t < taps; t++) {
            const int16x8_t w =
                vldrbq_gather_offset_z_s16(filter + t * OC + 8 * b, order, pred);
            vstrbq_s16(wb + 8 * t, w);
            sum = vaddq_s16(sum, w);
        }
        for (int32_t h = 0; h < 2; h++) {
            const int32_t c = 8 * b + 4 * h;
            const mve_pred16_t p4 = vctp32q((uint32_t)(OC - c > 0 ? OC - c : 0));
            const int32x4_t taps = h == 0 ? vmovlbq_s16(sum) : vmovltq_s16(sum);
            const int32x4_t shift = vldrwq_z_s32(p->output_shift + c, p4);
            const int32x4_t bv =
                bias != NULL ? vldrwq_z_s32(bias + c, p4) : vdupq_n_s32(0);
            vstrwq_s32(q + 4 * h, vmlaq_n_s32(bv, taps, p->input_offset));
            vstrwq_s32(q + 8 + 4 * h, vldrwq_z_s32(p->output_multiplier + c, p4));
            vstrwq_s32(q + 16 + 4 * h, vmaxq_s32(shift, vdupq_n_s32(0)));
            vstrwq_s32(q + 24 + 4 * h, vminq_s32(shift, vdupq_n_s32(0)));
            vstrwq_s32(q + 32 + 4 * h, vshrq_n_s32(vminq_s32(shift, vdupq_n_s32(0)), 31));
        }
    }
}

/* The row variants by (k - 3) + (stride - 1): 3x3, 5x5 and 7x7 at strides 1 and 2. */
static void (*const tvmk_cm_mvec_rows[6])(const struct tvmk_cm_mvec_row *) = {
    tvmk_cm_mvec_row_3s1, tvmk_cm_mvec_row_3s2, tvmk_cm_mvec_row_5s1,
    tvmk_cm_mvec_row_5s2, tvmk_cm_mvec_row_7s1, tvmk_cm_mvec_row_7s2};

int32_t tvmk_cm_depthwise_conv2d_s8_mvec(const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, int8_t *output,
                                         const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t s = p->stride_h, k = p->KH;
    const int32_t OC = p->C * p->mult, blocks = (OC + 7) / 8;
    const int32_t RW = ((p->OW + 1) / 2 * 2 - 1) * s + k; /* columns read, pairs */
    const int32_t slot_bytes = blocks * RW * 8;
    int32_t *prm = (int32_t *)p->scratch;
    int8_t *wl = (int8_t *)(prm + blocks * TVMK_CM_MVEC_PRM);
    int8_t *ring = wl + blocks * k * k * 8;
    struct tvmk_cm_mvec_row r;

    if (!tvmk_cm_dw_mvec_takes(p) || ((uintptr_t)p->scratch & 3) != 0 ||
        tvmk_cm_mvec_scratch(p) > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    tvmk_cm_mvec_layout(prm, wl, filter, bias, p, blocks);
    r.w = wl;
    r.prm = prm;
    r.blocks = blocks;
    r.block_bytes = RW * 8;
    r.OC = OC;
    r.OW = p->OW;
    r.output_offset = p->output_offset;
    r.lo = vdupq_n_s16((int16_t)p->activation_min);
    r.hi = vdupq_n_s16((int16_t)p->activation_max);
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = input + n * p->H * p->W * p->C;
        int32_t loaded = 0; /* padded rows copied into the ring so far */
        for (int32_t oy = 0; oy < p->OH; oy++) {
            for (; loaded < oy * s + k; loaded++) {
                const int32_t iy = loaded - p->pad_top;
                tvmk_cm_mvec_fill(ring + (loaded % k) * slot_bytes,
                                  iy >= 0 && iy < p->H ? x + iy * p->W * p->C : NULL, RW,
                                  blocks, p);
            }
            for (int32_t ky = 0; ky < k; ky++) {
                r.rows[ky] = ring + ((oy * s + ky) % k) * slot_bytes;
            }
            r.out = output + ((n * p->OH + oy) * p->OW) * OC;
            tvmk_cm_mvec_rows[(k - 3) + (s - 1)](&r);
        }
    }
    return TVM_DEVICE_OK;
}

#else

int32_t tvmk_cm_dw_mvec_takes(const struct tvmk_depthwise_conv2d_s8_params *p)
{
    (void)p;
    return 0;
}

int32_t tvmk_cm_depthwise_conv2d_s8_mvec(const int8_t *input, const int8_t *filter,
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
