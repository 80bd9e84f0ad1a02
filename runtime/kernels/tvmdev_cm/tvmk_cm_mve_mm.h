/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE): the block core of a convolution as a matrix product, two
 * windows (rows of int8, `chunks` x 16 bytes each) times four output channels, eight
 * int32 dot products.
 *
 * The four channels' weights are laid out at generation time in the order the loop reads
 * them: per 16-byte chunk of the window, the four channels' 16 bytes one after the other
 * (64 bytes a chunk, one pointer). Each chunk takes six vector loads (two windows, four
 * channels) and eight VMLADAVA: each loaded vector serves two or four dot products.
 * VMLADAVA accumulates into an even general register only, so eight accumulators are all
 * the even registers but SP's neighbour: two windows by four channels (or four by two) is
 * the largest block. The bytes past a window's taps are multiplied by zero weights, so they
 * need no predicate and may hold anything.
 */
#ifndef TVMK_CM_MVE_MM_H_
#define TVMK_CM_MVE_MM_H_

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stdint.h>

/* One chunk: two windows' 16 bytes (post-incremented), the four channels' (at w, w then
 * moved on by 64), eight VMLADAV<op> (op: "" to start the sums, "a" to accumulate). */
#define TVMK_CM_MVE_MM_CHUNK(op)                                                     \
    "vldrb.8 q0, [%[x0]], #16\n\t"                                                   \
    "vldrb.8 q2, [%[w], #16]\n\t"                                                    \
    "vldrb.8 q1, [%[x1]], #16\n\t"                                                   \
    "vmladav" op ".s8 %[a1], q0, q2\n\t"                                             \
    "vldrb.8 q3, [%[w], #32]\n\t"                                                    \
    "vmladav" op ".s8 %[b1], q1, q2\n\t"                                             \
    "vmladav" op ".s8 %[a2], q0, q3\n\t"                                             \
    "vldrb.8 q2, [%[w], #48]\n\t"                                                    \
    "vmladav" op ".s8 %[b2], q1, q3\n\t"                                             \
    "vmladav" op ".s8 %[a3], q0, q2\n\t"                                             \
    "vldrb.8 q3, [%[w]], #64\n\t"                                                    \
    "vmladav" op ".s8 %[b3], q1, q2\n\t"                                             \
    "vmladav" op ".s8 %[a0], q0, q3\n\t"                                             \
    "vmladav" op ".s8 %[b0], q1, q3\n\t"

/* The eight dot products: *p0 (window x0) and *p1 (x1), each the four channels' in lanes
 * 0..3; `chunks` >= 1. Written in assembly: the compiler, given the intrinsics, spilled
 * accumulators to the stack inside the loop. The eight accumulators take every even
 * register (r0 to r12 and LR), so the loop counts in another (SUBS and BNE, not LE), two
 * chunks a pass; an even count's second chunk is peeled with the first. The sums go to
 * the vectors through memory (four STRD, two VLDRW): VMOV of two registers to two lanes
 * (VMOV Qd[2], Qd[0], Rt, Rt2) gave other lanes under QEMU than the assembler's syntax
 * says, so it is not used. */
static inline __attribute__((always_inline)) void
tvmk_cm_mve_mm_2x4(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t chunks,
                   int32x4_t *p0, int32x4_t *p1)
{
    register int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4");
    register int32_t a3 __asm__("r6"), b0 __asm__("r8"), b1 __asm__("r10");
    register int32_t b2 __asm__("r12"), b3 __asm__("r14");
    int32_t buf[8]; /* the sums, from the general registers to two vectors */
    int32_t pairs = chunks - 1; /* halved below, its low bit in the carry */
    __asm__ volatile(
        TVMK_CM_MVE_MM_CHUNK("")
        "lsrs %[pairs], %[pairs], #1\n\t" /* C: an odd count left, Z: no pair left */
        "bcc 1f\n\t"
        TVMK_CM_MVE_MM_CHUNK("a") /* vector instructions keep the flags */
        "1:\n\t"
        "beq 3f\n\t"
        "2:\n\t"
        TVMK_CM_MVE_MM_CHUNK("a")
        TVMK_CM_MVE_MM_CHUNK("a")
        "subs %[pairs], %[pairs], #1\n\t"
        "bne 2b\n\t"
        "3:\n\t"
        "strd %[a0], %[a1], [%[buf]]\n\t"
        "strd %[a2], %[a3], [%[buf], #8]\n\t"
        "strd %[b0], %[b1], [%[buf], #16]\n\t"
        "strd %[b2], %[b3], [%[buf], #24]\n\t"
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [b0] "=&r"(b0),
          [b1] "=&r"(b1), [b2] "=&r"(b2), [b3] "=&r"(b3), [x0] "+r"(x0), [x1] "+r"(x1),
          [w] "+r"(w), [pairs] "+r"(pairs)
        : [buf] "r"(buf)
        : "q0", "q1", "q2", "q3", "memory", "cc");
    *p0 = vldrwq_s32(buf);
    *p1 = vldrwq_s32(buf + 4);
}

#endif

#endif /* TVMK_CM_MVE_MM_H_ */
