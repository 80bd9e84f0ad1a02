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
 * core register (VMLADAVA writes only those), r0 to r12 and lr, so the pass is one asm
 * block (tvmk_cm_mve_mm_pass) that keeps its state in memory (struct tvmk_cm_mve_pass,
 * r11) and counts its chunks in an odd register (SUBS, BNE). A last chunk of fewer than
 * 16 bytes loads the weights predicated (VCTP: no read past the filter's end; the zeroed
 * lanes meet the tile's zeros).
 *
 * Each output channel's constants are set once per call (tvmk_cm_mve_fold): its bias
 * folded with input_offset times the sum of its weights (TFLM's accumulator is sum(w * x)
 * + bias + input_offset * sum(w), both wrapping modulo 2^32), and its requantization's,
 * which the pass reads with one LDM. Requantization is TFLM's MultiplyByQuantizedMultiplier
 * exactly, four rows a vector: VSHL by the left shift, VQRDMULH, minus one for a negative
 * value when it shifts right, VRSHL (TFLM's rounding half away from zero), then the offset
 * and the clamp (as depthwise_conv2d_s8_mve.c's; tests/test_tvmdev_cm_mve.py models it at
 * the edges). The eight sums reach vectors by one STM past the tile and two VLDRWs.
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

/* One pass of the tile over output channel pairs; the asm reads it at these offsets. */
struct tvmk_cm_mve_pass {
    const int8_t *tile;               /* 0: four rows interleaved by 16 bytes */
    int32_t chunks;                   /* 4: K / 16 */
    int32_t tail;                     /* 8: K % 16 */
    int32_t output_offset;            /* 12 */
    const int8_t *w;                  /* 16: the first pair's first weight row */
    int32_t w_second;                 /* 20: its second row's, from the first (K, or 0) */
    const struct tvmk_cm_mve_ch *end; /* 24: past the last pair's channel constants */
    const struct tvmk_cm_mve_ch *ch;  /* 28: the first pair's first channel's */
    int8_t *out;                      /* 32: the pair's first output (row 0) */
    int32_t pad[3];
    int32_t lo[4], hi[4];             /* 48, 64: the activation's clamp, every lane */
    uint32_t rows[4];                 /* 80: each row's output offset from out */
};

/* The tile's four rows times the pairs of output channels from ch to end: per chunk of
 * 16 bytes, two weight loads, four of the tile and eight VMLADAVs into the eight even
 * core registers (the first chunk sets them), a last chunk of fewer than 16 bytes loading
 * the weights predicated; then one STM of the eight sums past the tile (64 x ceil(K / 16)
 * bytes in), two VLDRWs, and per channel one LDM of its constants and TFLM's
 * requantization of its four rows, stored by a scatter (row r at out + rows[r]). */
static __attribute__((noinline)) void tvmk_cm_mve_mm_pass(struct tvmk_cm_mve_pass *pass)
{
    register struct tvmk_cm_mve_pass *state __asm__("r11") = pass;
    __asm__ volatile(
        "   vldrw.32    q5, [r11, #48]\n"
        "   vldrw.32    q6, [r11, #64]\n"
        "   vldrw.32    q7, [r11, #80]\n"
        "   ldr         r9, [r11, #28]\n"
        "   ldr         r3, [r11, #16]\n"
        "0: mov         r1, r3\n"
        "   ldr         r3, [r11, #20]\n"
        "   add         r3, r1, r3\n"
        "   ldr         r5, [r11, #0]\n"
        "   ldr         r7, [r11, #4]\n"
        "   cbnz        r7, 5f\n"
        "   movs        r0, #0\n"
        "   movs        r2, #0\n"
        "   movs        r4, #0\n"
        "   movs        r6, #0\n"
        "   mov         r8, #0\n"
        "   mov         r10, #0\n"
        "   mov         r12, #0\n"
        "   mov         lr, #0\n"
        "   b           2f\n"
        "5: vldrb.8     q3, [r1], #16\n"
        "   vldrb.8     q4, [r3], #16\n"
        "   vldrb.8     q0, [r5], #64\n"
        "   vmladav.s8  r0, q0, q3\n"
        "   vmladav.s8  r8, q0, q4\n"
        "   vldrb.8     q0, [r5, #-48]\n"
        "   vmladav.s8  r2, q0, q3\n"
        "   vmladav.s8  r10, q0, q4\n"
        "   vldrb.8     q0, [r5, #-32]\n"
        "   vmladav.s8  r4, q0, q3\n"
        "   vmladav.s8  r12, q0, q4\n"
        "   vldrb.8     q0, [r5, #-16]\n"
        "   vmladav.s8  r6, q0, q3\n"
        "   vmladav.s8  lr, q0, q4\n"
        "   subs        r7, r7, #1\n"
        "   beq         2f\n"
        "1: vldrb.8     q3, [r1], #16\n"
        "   vldrb.8     q4, [r3], #16\n"
        "   vldrb.8     q0, [r5], #64\n"
        "   vmladava.s8 r0, q0, q3\n"
        "   vmladava.s8 r8, q0, q4\n"
        "   vldrb.8     q0, [r5, #-48]\n"
        "   vmladava.s8 r2, q0, q3\n"
        "   vmladava.s8 r10, q0, q4\n"
        "   vldrb.8     q0, [r5, #-32]\n"
        "   vmladava.s8 r4, q0, q3\n"
        "   vmladava.s8 r12, q0, q4\n"
        "   vldrb.8     q0, [r5, #-16]\n"
        "   vmladava.s8 r6, q0, q3\n"
        "   vmladava.s8 lr, q0, q4\n"
        "   subs        r7, r7, #1\n"
        "   bne         1b\n"
        "2: ldr         r7, [r11, #8]\n"
        "   cbz         r7, 3f\n"
        "   vctp.8      r7\n"
        "   vpstt\n"
        "   vldrbt.8    q3, [r1]\n"
        "   vldrbt.8    q4, [r3]\n"
        "   vldrb.8     q0, [r5], #64\n"
        "   vmladava.s8 r0, q0, q3\n"
        "   vmladava.s8 r8, q0, q4\n"
        "   vldrb.8     q0, [r5, #-48]\n"
        "   vmladava.s8 r2, q0, q3\n"
        "   vmladava.s8 r10, q0, q4\n"
        "   vldrb.8     q0, [r5, #-32]\n"
        "   vmladava.s8 r4, q0, q3\n"
        "   vmladava.s8 r12, q0, q4\n"
        "   vldrb.8     q0, [r5, #-16]\n"
        "   vmladava.s8 r6, q0, q3\n"
        "   vmladava.s8 lr, q0, q4\n"
        "   add         r3, r3, r7\n"
        "3:\n"
        "   stm         r5, {r0, r2, r4, r6, r8, r10, r12, lr}\n"
        "   vldrw.32    q0, [r5]\n"
        "   vldrw.32    q1, [r5, #16]\n"
        "   ldr         r6, [r11, #12]\n"
        "   ldr         r8, [r11, #32]\n"
        "   adds        r10, r8, #1\n"
        "   ldm         r9!, {r0, r2, r4, r5, r7}\n"
        "   vadd.i32    q0, q0, r0\n"
        "   vshl.s32    q0, r4\n"
        "   vqrdmulh.s32 q0, q0, r2\n"
        "   vshr.s32    q2, q0, #31\n"
        "   vmul.i32    q2, q2, r7\n"
        "   vqadd.s32   q0, q0, q2\n"
        "   vrshl.s32   q0, r5\n"
        "   vadd.i32    q0, q0, r6\n"
        "   vmax.s32    q0, q0, q5\n"
        "   vmin.s32    q0, q0, q6\n"
        "   vstrb.32    q0, [r8, q7]\n"
        "   ldm         r9!, {r0, r2, r4, r5, r7}\n"
        "   vadd.i32    q1, q1, r0\n"
        "   vshl.s32    q1, r4\n"
        "   vqrdmulh.s32 q1, q1, r2\n"
        "   vshr.s32    q2, q1, #31\n"
        "   vmul.i32    q2, q2, r7\n"
        "   vqadd.s32   q1, q1, q2\n"
        "   vrshl.s32   q1, r5\n"
        "   vadd.i32    q1, q1, r6\n"
        "   vmax.s32    q1, q1, q5\n"
        "   vmin.s32    q1, q1, q6\n"
        "   vstrb.32    q1, [r10, q7]\n"
        "   adds        r8, r8, #2\n"
        "   str         r8, [r11, #32]\n"
        "   ldr         r7, [r11, #24]\n"
        "   cmp         r9, r7\n"
        "   bne         0b\n"
        :
        : "r"(state)
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r12", "lr",
          "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "p0", "memory", "cc");
}

#endif /* TVMK_CM_MVE_MM_H_ */
