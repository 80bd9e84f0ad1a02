/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE) path: DEPTHWISE_CONV_2D int8 on a Cortex-M55 across channels,
 * eight output channels a vector (tvmk_cm.h).
 *
 * NHWC keeps a pixel's channels together, so one VLDRB.S16 loads eight channels of a tap
 * widened to int16, and VMULLB/VMULLT multiply them by the filter's eight (laid out alike:
 * [1, KH, KW, OC]) into the even and the odd channels' int32 accumulators. Two output
 * pixels of a row share each filter load. The input rows a row of outputs reads are
 * copied, as they are first needed, into a ring of k rows in the scratch whose padding
 * columns and rows hold the input's zero point, so the loops have no bounds checks, and
 * each channel's bias is folded with input_offset times the sum of its taps (sum(w * x) +
 * bias + input_offset * sum(w) is TFLM's accumulator over a window whose padding holds
 * the zero point, both modulo 2^32). A single input channel with a channel multiplier
 * (person_detect's first layer) is copied into the ring repeated once per output channel.
 *
 * Requantization is TFLM's MultiplyByQuantizedMultiplier exactly, per channel, four
 * channels a vector: the left shift, VQRDMULH, and the rounding division by 2^right with
 * ties away from zero (one less for a negative value where right > 0, saturating, then
 * VRSHL's rounding shift, which rounds ties up), then the output offset; a saturating
 * narrowing to int16 and the clamp there (the same as TFLM's int32 clamp: its bounds are
 * int8). The scratch holds, per block of eight channels, the folded biases and the
 * requantization's vectors (160 bytes), then the ring, then, when the channels are not a
 * multiple of 8, the filter padded to a multiple of 8 per tap.
 *
 * In place (output == input): output row o is written after every input row it covers
 * that rows from o on read is in the ring (each is copied before the first row that reads
 * it), so the output may start at the input's address (kernels.yaml, inplace_keep).
 *
 * The hooks (tvmdev/plan/hooks/tvmdev_cm_mve.py, channel_path) choose this path or the
 * per-channel plane (depthwise_conv2d_s8_mve.c) at generation time; tvmk_cm_dw_mvec_takes
 * is the same rule.
 */
#include "tvmk_cm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stddef.h>

#define TVMK_CM_MVEC_BLOCK_WORDS 40 /* per 8 channels: 10 vectors of 4 */

/* What one row of outputs reads, for one block of eight channels. */
struct tvmk_cm_mvec_row {
    const int8_t *rows[3]; /* the ring rows of the window's rows, at the block */
    const int8_t *w;       /* the filter's first tap, at the block */
    const int32_t *prm;    /* the block's 10 vectors */
    int8_t *out;           /* the row's first output, at the block */
    int32_t wstep;         /* bytes from one tap to the next in the filter */
    int32_t xstep;         /* bytes from one pixel to the next in the ring and output */
    int32_t s, OW;
    int32_t output_offset;
    int16x8_t lo, hi;
    mve_pred16_t store;
};

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators, per lane's multiplier and
 * shifts (prm: the multiplier, the left shift, minus the right shift, and -1 where the
 * right shift is positive), then the output offset. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mvec_requantize(int32x4_t acc, const int32_t *prm, int32_t output_offset)
{
    int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, vldrwq_s32(prm + 8)), vldrwq_s32(prm));
    x = vqaddq_s32(x, vandq_s32(vshrq_n_s32(x, 31), vldrwq_s32(prm + 24)));
    return vaddq_n_s32(vrshlq_s32(x, vldrwq_s32(prm + 16)), output_offset);
}

/* The even and odd channels' accumulators as eight int8 outputs, clamped. */
static inline __attribute__((always_inline)) void
tvmk_cm_mvec_store(int8_t *out, int32x4_t e, int32x4_t o, const struct tvmk_cm_mvec_row *r)
{
    int16x8_t v = vqmovnbq_s32(vdupq_n_s16(0), tvmk_cm_mvec_requantize(e, r->prm + 8,
                                                                        r->output_offset));
    v = vqmovntq_s32(v, tvmk_cm_mvec_requantize(o, r->prm + 12, r->output_offset));
    v = vminq_s16(vmaxq_s16(v, r->lo), r->hi);
    vstrbq_p_s16(out, v, r->store);
}

/* One row of outputs of one block for a k x k filter (a constant where inlined), two
 * output pixels at a time (the last pair's second, past the row, is not stored). */
static inline __attribute__((always_inline)) void
tvmk_cm_mvec_row(const struct tvmk_cm_mvec_row *r, const int32_t k)
{
    const int32_t xs = r->xstep;
    const int32_t ws = r->wstep;
    const int32_t next = r->s * xs; /* the second pixel's window */
    const int32x4_t be = vldrwq_s32(r->prm);
    const int32x4_t bo = vldrwq_s32(r->prm + 4);
    int8_t *out = r->out;
    for (int32_t ox = 0; ox < r->OW; ox += 2) {
        int32x4_t a0e = be, a0o = bo, a1e = be, a1o = bo;
        const int8_t *w = r->w;
        /* loops, not unrolled: unrolled, GCC hoists every load and spills */
#pragma GCC unroll 1
        for (int32_t ky = 0; ky < k; ky++) {
            const int8_t *x = r->rows[ky] + ox * next;
#pragma GCC unroll 1
            for (int32_t kx = 0; kx < k; kx++) {
                const int16x8_t wv = vldrbq_s16(w);
                const int16x8_t x0 = vldrbq_s16(x);
                const int16x8_t x1 = vldrbq_s16(x + next);
                a0e = vaddq_s32(a0e, vmullbq_int_s16(x0, wv));
                a0o = vaddq_s32(a0o, vmulltq_int_s16(x0, wv));
                a1e = vaddq_s32(a1e, vmullbq_int_s16(x1, wv));
                a1o = vaddq_s32(a1o, vmulltq_int_s16(x1, wv));
                w += ws;
                x += xs;
            }
        }
        tvmk_cm_mvec_store(out, a0e, a0o, r);
        if (ox + 1 < r->OW) {
            tvmk_cm_mvec_store(out + xs, a1e, a1o, r);
        }
        out += 2 * xs;
    }
}

/* 3x3 only: 5x5 and 7x7 ran more instructions than CMSIS-NN's on MCUNet VWW's layers
 * (tvmdev_cm_mvedw.py), and each variant costs the M55's ITCM code. */
static __attribute__((noinline)) void tvmk_cm_mvec_row_3(const struct tvmk_cm_mvec_row *r)
{
    tvmk_cm_mvec_row(r, 3);
}

int32_t tvmk_cm_dw_mvec_takes(const struct tvmk_depthwise_conv2d_s8_params *p)
{
    /* the hooks' rule (tvmdev_cm_mvedw.py): where it measured fewer instructions than
     * CMSIS-NN's and the plane's */
    return p->KH == 3 && p->KW == 3 && (p->stride_h == 1 || p->stride_h == 2) &&
           p->stride_w == p->stride_h && p->dil_h == 1 && p->dil_w == 1 &&
           ((p->mult == 1 && p->C <= 32) || (p->C == 1 && p->mult <= 16));
}

/* n bytes of value v at dst, 16 a store. */
static void tvmk_cm_mvec_set(int8_t *dst, int8_t v, int32_t n)
{
    const int8x16_t z = vdupq_n_s8(v);
    for (; n > 0; n -= 16, dst += 16) {
        vstrbq_p_s8(dst, z, vctp8q((uint32_t)n));
    }
}

/* One ring row: RW pixels of OC bytes; input row `src` (NULL: a padding row) from column
 * pl on, the rest the zero point. */
static void tvmk_cm_mvec_fill(int8_t *dst, const int8_t *src, int32_t RW,
                              const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t OC = p->C * p->mult;
    const int8_t zp = (int8_t)(-p->input_offset);
    int32_t cols = RW - p->pad_left < p->W ? RW - p->pad_left : p->W;
    if (src == NULL || cols <= 0) {
        tvmk_cm_mvec_set(dst, zp, RW * OC);
        return;
    }
    tvmk_cm_mvec_set(dst, zp, p->pad_left * OC);
    dst += p->pad_left * OC;
    if (p->mult == 1) {
        for (int32_t n = cols * OC; n > 0; n -= 16, src += 16, dst += 16) {
            const mve_pred16_t pred = vctp8q((uint32_t)n);
            vstrbq_p_s8(dst, vldrbq_z_s8(src, pred), pred);
        }
        dst -= (16 - (cols * OC) % 16) % 16; /* back to the row's end */
    } else { /* one input channel, repeated once per output channel */
        const mve_pred16_t pred = vctp8q((uint32_t)OC);
        for (int32_t i = 0; i < cols; i++, dst += OC) {
            vstrbq_p_s8(dst, vdupq_n_s8(src[i]), pred);
        }
    }
    tvmk_cm_mvec_set(dst, zp, (RW - p->pad_left - cols) * OC);
}

/* Per block of eight output channels: the folded biases (even channels, odd channels),
 * then per channel its multiplier, left shift, minus its right shift and the rounding
 * fix-up's mask, each as even then odd channels (prm + 8 .. + 40). Channels past OC
 * get zeros (their outputs are not stored). */
static void tvmk_cm_mvec_params(int32_t *prm, const int8_t *filter, int32_t wstep,
                                const int32_t *bias,
                                const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t OC = p->C * p->mult;
    const int32_t taps = p->KH * p->KW;
    for (int32_t c = 0; c < (OC + 7) / 8 * 8; c++) {
        int32_t *b = prm + (c / 8) * TVMK_CM_MVEC_BLOCK_WORDS;
        const int32_t lane = (c % 8) / 2 + ((c % 2) ? 4 : 0); /* even, then odd */
        uint32_t sum = 0;
        int32_t shift = 0, mult = 0, bv = 0;
        if (c < OC) {
            for (int32_t t = 0; t < taps; t++) {
                sum += (uint32_t)(int32_t)filter[t * wstep + c];
            }
            shift = p->output_shift[c];
            mult = p->output_multiplier[c];
            bv = bias != NULL ? bias[c] : 0;
        }
        b[lane] = (int32_t)((uint32_t)bv + (uint32_t)p->input_offset * sum);
        b[8 + lane] = mult;
        b[16 + lane] = shift > 0 ? shift : 0;
        b[24 + lane] = shift > 0 ? 0 : shift;
        b[32 + lane] = shift < 0 ? -1 : 0;
    }
}

int32_t tvmk_cm_depthwise_conv2d_s8_mvec(const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, int8_t *output,
                                         const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t k = p->KH, s = p->stride_h;
    const int32_t OC = p->C * p->mult, OC8 = (OC + 7) / 8 * 8;
    const int32_t RW = ((p->OW + 1) / 2 * 2 - 1) * s + k; /* columns read, pairs */
    const int32_t row_bytes = RW * OC;
    int32_t *prm = (int32_t *)p->scratch;
    int8_t *ring = (int8_t *)(prm + OC8 / 8 * TVMK_CM_MVEC_BLOCK_WORDS);
    int8_t *wpad = ring + k * row_bytes + 16;
    const int32_t need = OC8 / 8 * TVMK_CM_MVEC_BLOCK_WORDS * 4 + k * row_bytes + 16 +
                         (OC % 8 != 0 ? k * k * OC8 : 0);
    struct tvmk_cm_mvec_row r;

    if (!tvmk_cm_dw_mvec_takes(p) || ((uintptr_t)p->scratch & 3) != 0 ||
        need > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    r.wstep = OC;
    r.w = filter;
    if (OC % 8 != 0) { /* the filter, each tap's channels padded to a multiple of 8 */
        for (int32_t t = 0; t < k * k; t++) {
            for (int32_t c = 0; c < OC8; c++) {
                wpad[t * OC8 + c] = c < OC ? filter[t * OC + c] : 0;
            }
        }
        r.wstep = OC8;
        r.w = wpad;
    }
    tvmk_cm_mvec_params(prm, r.w, r.wstep, bias, p);
    r.xstep = OC;
    r.s = s;
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
                tvmk_cm_mvec_fill(ring + (loaded % k) * row_bytes,
                                  iy >= 0 && iy < p->H ? x + iy * p->W * p->C : NULL, RW, p);
            }
            for (int32_t c = 0; c < OC; c += 8) {
                const struct tvmk_cm_mvec_row *rp = &r;
                for (int32_t ky = 0; ky < k; ky++) {
                    r.rows[ky] = ring + ((oy * s + ky) % k) * row_bytes + c;
                }
                r.w = (OC % 8 != 0 ? wpad : filter) + c;
                r.prm = prm + (c / 8) * TVMK_CM_MVEC_BLOCK_WORDS;
                r.out = output + ((n * p->OH + oy) * p->OW) * OC + c;
                r.store = vctp16q((uint32_t)(OC - c));
                tvmk_cm_mvec_row_3(rp);
            }
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
