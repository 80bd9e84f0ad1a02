/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE): an int8 matrix product's core, four rows (pixels, or windows)
 * times every output channel, TFLM's requantization; shared by the MVE kernels that
 * reduce to one (conv1x1_s8_mve.c; an im2col convolution: a window is a row of KH x KW x C).
 *
 * The four rows are first copied into a tile in the scratch, interleaved by 16 bytes
 * (chunk k: row 0's bytes 16k..16k+15, row 1's, row 2's, row 3's), zero past the row's
 * length K, so one pointer walks them. Each pair of output channels then takes, per chunk,
 * two loads of their weights (rows of an M x K filter, the OHWI layout as it is: no flash
 * for a copy), four of the tile and eight VMLADAVs (16 multiply-accumulates each): 14
 * instructions for 128, where CMSIS-NN v7's arm_nn_mat_mult_nt_t_s8 takes 11 for 64 (four
 * rows, one channel, and a VADDVA of its weights). Its eight accumulators fill every even
 * core register (VMLADAVA writes only those), r0 to r12 and lr, so the loop counts in an
 * odd one (SUBS, BNE). A last chunk of fewer than 16 loads the weights predicated (VCTP:
 * no read past the filter's end; the zeroed lanes meet the tile's zeros).
 *
 * Each output channel's constants are set once per call (tvmk_cm_mve_fold): its bias
 * folded with input_offset times the sum of its weights (TFLM's accumulator is sum(w * x)
 * + bias + input_offset * sum(w), both wrapping modulo 2^32), and its requantization's.
 * Requantization is TFLM's MultiplyByQuantizedMultiplier exactly, four rows a vector:
 * VSHL by the left shift, VQRDMULH, minus one for a negative value when it shifts right,
 * VRSHL (TFLM's rounding half away from zero), then the offset and the clamp (as
 * depthwise_conv2d_s8_mve.c's; tests/test_tvmdev_cm_mve.py models it at the edges).
 */
#ifndef TVMK_CM_MVE_MM_H_
#define TVMK_CM_MVE_MM_H_

#include <arm_mve.h>
#include <stdint.h>

/* One output channel's constants, set once per call in the scratch. */
struct tvmk_cm_mve_ch {
    int32_t bias; /* folded with input_offset times the sum of the channel's weights */
    int32_t multiplier, left, neg_right, rounds; /* rounds: 1 when right > 0, else 0 */
};

/* What the product reads: the M x K filter, the channels' constants, the output's. */
struct tvmk_cm_mve_mm {
    const int8_t *W;
    const struct tvmk_cm_mve_ch *ch;
    int32_t K, M;
    int32_t output_offset, activation_min, activation_max;
};

/* The M channels' constants from the bias (or NULL), multipliers and shifts. */
static inline void tvmk_cm_mve_fold(struct tvmk_cm_mve_ch *ch, const int8_t *W,
                                    const int32_t *B, int32_t K, int32_t M,
                                    int32_t input_offset, const int32_t *multiplier,
                                    const int32_t *shift)
{
    for (int32_t m = 0; m < M; m++) {
        const int8_t *w = W + m * K;
        int32_t sum = 0;
        for (int32_t k = 0; k < K; k += 16) {
            const mve_pred16_t in = vctp8q((uint32_t)(K - k));
            sum = vaddvaq_p_s8(sum, vldrbq_z_s8(w + k, in), in);
        }
        ch[m].bias = (int32_t)((B != NULL ? (uint32_t)B[m] : 0u) +
                               (uint32_t)input_offset * (uint32_t)sum);
        ch[m].multiplier = multiplier[m];
        ch[m].left = shift[m] > 0 ? shift[m] : 0;
        ch[m].neg_right = shift[m] > 0 ? 0 : shift[m];
        ch[m].rounds = shift[m] < 0;
    }
}

/* Row r (its K bytes at x) into the tile at r x 16 bytes, zero past K. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_tile_row(int8_t *tile, int32_t r, const int8_t *x, int32_t K)
{
    for (int32_t k = 0; k < K; k += 16) {
        vstrbq_s8(tile + 4 * k + 16 * r, vldrbq_z_s8(x + k, vctp8q((uint32_t)(K - k))));
    }
}

/* TFLM's MultiplyByQuantizedMultiplier of four accumulators, then the offset and clamp. */
static inline __attribute__((always_inline)) int32x4_t
tvmk_cm_mve_requant(int32x4_t x, const struct tvmk_cm_mve_ch *c, int32_t offset,
                    int32x4_t lo, int32x4_t hi)
{
    x = vqrdmulhq_n_s32(vshlq_r_s32(vaddq_n_s32(x, c->bias), c->left), c->multiplier);
    x = vqaddq_s32(x, vmulq_n_s32(vshrq_n_s32(x, 31), c->rounds));
    x = vaddq_n_s32(vrshlq_n_s32(x, c->neg_right), offset);
    return vminq_s32(vmaxq_s32(x, lo), hi);
}

/* The dot products of the tile's four rows with weight rows w0 and w1 over K bytes
 * (chunks = K / 16 full chunks, then `tail` = K % 16 bytes), stored at the tile's end
 * (out, 64 x ceil(K / 16) bytes past it): out[0..3] the four rows' with w0's, out[4..7]
 * with w1's. The first chunk sets the accumulators (VMLADAV), the others add; one STM
 * stores all eight. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_dots_4x2(const int8_t *tile, const int8_t *w0, const int8_t *w1, int32_t chunks,
                     int32_t tail)
{
    __asm__ volatile(
        "   cmp         %[n], #0\n"
        "   bne         0f\n"
        "   movs        r0, #0\n"
        "   movs        r2, #0\n"
        "   movs        r4, #0\n"
        "   movs        r6, #0\n"
        "   mov         r8, #0\n"
        "   mov         r10, #0\n"
        "   mov         r12, #0\n"
        "   mov         lr, #0\n"
        "   b           2f\n"
        "0: vldrb.8     q4, [%[w0]], #16\n"
        "   vldrb.8     q5, [%[w1]], #16\n"
        "   vldrb.8     q0, [%[x]], #64\n"
        "   vmladav.s8  r0, q0, q4\n"
        "   vmladav.s8  r8, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-48]\n"
        "   vmladav.s8  r2, q0, q4\n"
        "   vmladav.s8  r10, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-32]\n"
        "   vmladav.s8  r4, q0, q4\n"
        "   vmladav.s8  r12, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-16]\n"
        "   vmladav.s8  r6, q0, q4\n"
        "   vmladav.s8  lr, q0, q5\n"
        "   subs        %[n], %[n], #1\n"
        "   beq         2f\n"
        "1: vldrb.8     q4, [%[w0]], #16\n"
        "   vldrb.8     q5, [%[w1]], #16\n"
        "   vldrb.8     q0, [%[x]], #64\n"
        "   vmladava.s8 r0, q0, q4\n"
        "   vmladava.s8 r8, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-48]\n"
        "   vmladava.s8 r2, q0, q4\n"
        "   vmladava.s8 r10, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-32]\n"
        "   vmladava.s8 r4, q0, q4\n"
        "   vmladava.s8 r12, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-16]\n"
        "   vmladava.s8 r6, q0, q4\n"
        "   vmladava.s8 lr, q0, q5\n"
        "   subs        %[n], %[n], #1\n"
        "   bne         1b\n"
        "2: ldr         %[n], %[t]\n"
        "   cmp         %[n], #0\n"
        "   beq         3f\n"
        "   vctp.8      %[n]\n"
        "   vpstt\n"
        "   vldrbt.8    q4, [%[w0]]\n"
        "   vldrbt.8    q5, [%[w1]]\n"
        "   vldrb.8     q0, [%[x]], #64\n"
        "   vmladava.s8 r0, q0, q4\n"
        "   vmladava.s8 r8, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-48]\n"
        "   vmladava.s8 r2, q0, q4\n"
        "   vmladava.s8 r10, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-32]\n"
        "   vmladava.s8 r4, q0, q4\n"
        "   vmladava.s8 r12, q0, q5\n"
        "   vldrb.8     q0, [%[x], #-16]\n"
        "   vmladava.s8 r6, q0, q4\n"
        "   vmladava.s8 lr, q0, q5\n"
        "3: stm         %[x], {r0, r2, r4, r6, r8, r10, r12, lr}\n"
        : [x] "+r"(tile), [w0] "+r"(w0), [w1] "+r"(w1), [n] "+r"(chunks)
        : [t] "m"(tail)
        : "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q4", "q5", "p0", "memory",
          "cc");
}

/* The tile's four rows times every output channel, stored at out (row r's channel m at
 * out[r * stride + m]; the rows `lanes` keeps: a lane a row, four predicate bits each). */
static inline void tvmk_cm_mve_mm_tile(const struct tvmk_cm_mve_mm *d, const int8_t *tile,
                                       int8_t *out, int32_t stride, mve_pred16_t lanes)
{
    const int32_t chunks = d->K / 16, tail = d->K % 16;
    const int32_t *acc = (const int32_t *)(tile + 64 * ((d->K + 15) / 16));
    const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)stride);
    const int32x4_t lo = vdupq_n_s32(d->activation_min);
    const int32x4_t hi = vdupq_n_s32(d->activation_max);
    const struct tvmk_cm_mve_ch *c = d->ch;
    for (int32_t m = 0; m < d->M; m += 2, c += 2) {
        const int8_t *w0 = d->W + m * d->K;
        const int two = m + 1 < d->M;
        tvmk_cm_mve_dots_4x2(tile, w0, two ? w0 + d->K : w0, chunks, tail);
        const int32x4_t v0 = vldrwq_s32(acc), v1 = vldrwq_s32(acc + 4);
        vstrbq_scatter_offset_p_s32(out + m, scatter,
                                    tvmk_cm_mve_requant(v0, c, d->output_offset, lo, hi),
                                    lanes);
        if (two) {
            vstrbq_scatter_offset_p_s32(out + m + 1, scatter,
                                        tvmk_cm_mve_requant(v1, c + 1, d->output_offset, lo,
                                                            hi),
                                        lanes);
        }
    }
}

#endif /* TVMK_CM_MVE_MM_H_ */
