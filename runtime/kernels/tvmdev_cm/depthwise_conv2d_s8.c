/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm: DEPTHWISE_CONV_2D int8, one channel at a time through an int16 plane and
 * its filter widened to int16 pairs (tvmk_cm.h). Each filter size and stride has its own loops, with every bound a
 * constant, so the compiler unrolls a window into SMLADs; two output columns share each
 * filter word (and, at stride 2, each input word).
 */
#include "tvmk_cm.h"
#include "tvmk_cm_arith.h"

/* What one channel's loops read: its plane, its filter words and requantization. */
struct tvmk_cm_channel {
    const int16_t *plane;
    int32_t stride; /* of a plane row, in elements */
    int32_t *weights;     /* the channel's filter words (scratch, filled here) */
    const int8_t *filter; /* its first tap; taps are `step` bytes apart */
    int32_t bias;         /* its bias (0 without), folded here */
    int32_t input_offset;
    struct tvmk_cm_requant q;
    int8_t *output; /* the channel's first output; outputs are step bytes apart */
    int32_t step, OH, OW;
};

/* The channel's filter as int16 pairs (taps 2j and 2j + 1 of a row, a zero after an odd
 * row's last) into its words, and its bias folded with input_offset times the sum of its
 * taps: what the loops multiply raw inputs by, once per channel and call. */
static inline __attribute__((always_inline)) int32_t
tvmk_cm_widen(const struct tvmk_cm_channel *ch, const int32_t k)
{
    int32_t *words = ch->weights;
    int32_t sum = 0;
#pragma GCC unroll 7
    for (int32_t ky = 0; ky < k; ky++) {
        const int8_t *row = ch->filter + ky * k * ch->step;
#pragma GCC unroll 4
        for (int32_t kx = 0; kx < k; kx += 2) {
            const int32_t t0 = row[kx * ch->step];
            const int32_t t1 = kx + 1 < k ? row[(kx + 1) * ch->step] : 0;
            sum += t0 + t1;
            *words++ = (int32_t)(((uint32_t)t0 & 0xFFFFu) | ((uint32_t)t1 << 16));
        }
    }
    return ch->bias + ch->input_offset * sum;
}

/* One channel's outputs for a k x k filter at stride s (constants where it is inlined). */
static inline __attribute__((always_inline)) void
tvmk_cm_dw_channel(const struct tvmk_cm_channel *ch, const int32_t k, const int32_t s)
{
    const int32_t pairs = (k + 1) / 2;
    const int32_t rs = ch->stride;
    const int32_t bias = tvmk_cm_widen(ch, k);
    for (int32_t oy = 0; oy < ch->OH; oy++) {
        const int16_t *row = ch->plane + oy * s * rs;
        int8_t *out = ch->output + oy * ch->OW * ch->step;
        int32_t ox = 0;
        for (; ox + 1 < ch->OW; ox += 2) {
            int32_t a0 = bias;
            int32_t a1 = bias;
            const int16_t *x = row + ox * s;
            const int32_t *w = ch->weights;
#pragma GCC unroll 7
            for (int32_t ky = 0; ky < k; ky++) {
#pragma GCC unroll 4
                for (int32_t j = 0; j < pairs; j++) {
                    a0 = TVMK_CM_SMLAD(tvmk_cm_pair(x + 2 * j), w[j], a0);
                    a1 = TVMK_CM_SMLAD(tvmk_cm_pair(x + s + 2 * j), w[j], a1);
                }
                x += rs;
                w += pairs;
            }
            out[0] = tvmk_cm_requantize(a0, &ch->q);
            out[ch->step] = tvmk_cm_requantize(a1, &ch->q);
            out += 2 * ch->step;
        }
        if (ox < ch->OW) {
            int32_t a0 = bias;
            const int16_t *x = row + ox * s;
            const int32_t *w = ch->weights;
#pragma GCC unroll 7
            for (int32_t ky = 0; ky < k; ky++) {
#pragma GCC unroll 4
                for (int32_t j = 0; j < pairs; j++) {
                    a0 = TVMK_CM_SMLAD(tvmk_cm_pair(x + 2 * j), w[j], a0);
                }
                x += rs;
                w += pairs;
            }
            out[0] = tvmk_cm_requantize(a0, &ch->q);
        }
    }
}

#define TVMK_CM_DW_VARIANT(K, S)                                                        \
    static __attribute__((noinline)) void tvmk_cm_dw_##K##x##K##_s##S(                \
        const struct tvmk_cm_channel *ch)                                               \
    {                                                                                   \
        tvmk_cm_dw_channel(ch, K, S);                                                   \
    }

TVMK_CM_DW_VARIANT(3, 1)
TVMK_CM_DW_VARIANT(3, 2)
TVMK_CM_DW_VARIANT(5, 1)
TVMK_CM_DW_VARIANT(5, 2)
TVMK_CM_DW_VARIANT(7, 1)
TVMK_CM_DW_VARIANT(7, 2)

/* The loops of filter size k and stride s (a switch, not a pointer: every call can be
 * followed, so the stack bound is known). */
static void tvmk_cm_dw_variant(int32_t k, int32_t s, const struct tvmk_cm_channel *ch)
{
    switch (k * 10 + s) {
    case 31: tvmk_cm_dw_3x3_s1(ch); break;
    case 32: tvmk_cm_dw_3x3_s2(ch); break;
    case 51: tvmk_cm_dw_5x5_s1(ch); break;
    case 52: tvmk_cm_dw_5x5_s2(ch); break;
    case 71: tvmk_cm_dw_7x7_s1(ch); break;
    default: tvmk_cm_dw_7x7_s2(ch); break;
    }
}

/* Whether the library takes this filter size and these strides (the hooks' decline). */
static int tvmk_cm_dw_takes(const struct tvmk_depthwise_conv2d_s8_params *p)
{
    const int32_t k = p->KH;
    return (k == 3 || k == 5 || k == 7) && p->KW == k &&
           (p->stride_h == 1 || p->stride_h == 2) && p->stride_w == p->stride_h &&
           p->mult == 1 && p->dil_h == 1 && p->dil_w == 1;
}

/* Channel c of one image into the plane's interior (rows r0..r1, columns q0..q1). */
static void tvmk_cm_fill(int16_t *plane, int32_t rs, const int8_t *x, int32_t r0, int32_t r1,
                         int32_t q0, int32_t q1, const struct tvmk_depthwise_conv2d_s8_params *p)
{
    for (int32_t r = r0; r < r1; r++) {
        const int8_t *src = x + ((r - p->pad_top) * p->W + (q0 - p->pad_left)) * p->C;
        int16_t *dst = plane + r * rs;
#pragma GCC unroll 4
        for (int32_t q = q0; q < q1; q++) {
            dst[q] = *src;
            src += p->C;
        }
    }
}

static int32_t tvmk_cm_min(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

int32_t tvmk_cm_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                    const int32_t *bias, int8_t *output,
                                    const struct tvmk_depthwise_conv2d_s8_params *p,
                                    void *resource_handle)
{
    const int32_t k = p->KH;
    const int32_t rows = (p->OH - 1) * p->stride_h + k;
    const int32_t cols = (p->OW - 1) * p->stride_w + k;
    const int32_t rs = cols + 1; /* the odd tap's pair reads one element past a window */
    const int32_t r1 = tvmk_cm_min(p->pad_top + p->H, rows);
    const int32_t q1 = tvmk_cm_min(p->pad_left + p->W, cols);
    /* the plane, then the channel's filter words (4-byte aligned) */
    const int32_t plane_bytes = (rows * rs * (int32_t)sizeof(int16_t) + 3) & ~3;
    int16_t *plane = (int16_t *)p->scratch;
    int32_t *words = (int32_t *)(void *)((uint8_t *)p->scratch + plane_bytes);
    struct tvmk_cm_channel ch;
    (void)resource_handle;

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
    /* Helium: the MVE paths, whose scratch the hooks sized for the one they chose (arch
     * mve, tvmdev_cm_mve.py): across channels where it takes the layer, else the plane */
    if (tvmk_cm_dw_mvec_takes(p)) {
        return tvmk_cm_depthwise_conv2d_s8_mvec(input, filter, bias, output, p);
    }
    return tvmk_cm_depthwise_conv2d_s8_mve(input, filter, bias, output, p);
#endif

    if (!tvmk_cm_dw_takes(p) ||
        (int64_t)plane_bytes + 4 * k * ((k + 1) / 2) > p->scratch_bytes) {
        return TVM_DEVICE_ERR_INVALID; /* declined at generation time */
    }
    /* The padding: the input's zero point, which the folded bias accounts for. */
    for (int32_t i = 0; i < rows * rs; i++) {
        plane[i] = (int16_t)(-p->input_offset);
    }
    ch.plane = plane;
    ch.weights = words;
    ch.input_offset = p->input_offset;
    ch.stride = rs;
    ch.step = p->C;
    ch.OH = p->OH;
    ch.OW = p->OW;
    for (int32_t n = 0; n < p->N; n++) {
        const int8_t *x = input + n * p->H * p->W * p->C;
        for (int32_t c = 0; c < p->C; c++) {
            tvmk_cm_fill(plane, rs, x + c, p->pad_top, r1, p->pad_left, q1, p);
            ch.filter = filter + c;
            ch.bias = bias != NULL ? bias[c] : 0;
            tvmk_cm_requant_init(&ch.q, p->output_multiplier[c], p->output_shift[c],
                                 p->output_offset, p->activation_min, p->activation_max);
            ch.output = output + n * p->OH * p->OW * p->C + c;
            tvmk_cm_dw_variant(k, p->stride_h, &ch);
        }
    }
    return TVM_DEVICE_OK;
}
