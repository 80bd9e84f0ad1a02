/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev_cm, Helium (MVE): the block core of a convolution as a matrix product, two
 * windows (rows of int8, `chunks` x 16 bytes each) times four output channels, eight
 * int32 dot products.
 *
 * The two windows are interleaved in memory a chunk at a time (window 0's 16 bytes, then
 * window 1's: 32 bytes a chunk, one pointer); the four channels' weights are four rows
 * `stride` bytes apart (the filter itself, OHWI, when its taps are a whole number of
 * chunks), each its own pointer. Each chunk takes six vector loads (two windows, four
 * channels) and eight VMLADAVA: each loaded vector serves two or four dot products.
 * VMLADAVA accumulates into an even general register only, so eight accumulators are all
 * the even registers (r0 to r12 and LR): two windows by four channels (or four by two) is
 * the largest block, and with the five pointers and the count it takes every general
 * register but SP and PC. The bytes past a window's taps are multiplied by zero weights,
 * so they need no predicate and may hold anything.
 */
#ifndef TVMK_CM_MVE_MM24_H_
#define TVMK_CM_MVE_MM24_H_

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#include <stdint.h>

/* One chunk: the two windows' 16 bytes (x then moved on by 32), each channel's (its
 * pointer moved on by 16), eight VMLADAV<op> (op: "" to start the sums, "a" to add). */
#define TVMK_CM_MVE_MM_CHUNK(op)                                                     \
    "vldrb.8 q1, [%[x], #16]\n\t"                                                    \
    "vldrb.8 q0, [%[x]], #32\n\t"                                                    \
    "vldrb.8 q2, [%[w0]], #16\n\t"                                                   \
    "vldrb.8 q3, [%[w1]], #16\n\t"                                                   \
    "vmladav" op ".s8 %[a0], q0, q2\n\t"                                             \
    "vmladav" op ".s8 %[b0], q1, q2\n\t"                                             \
    "vldrb.8 q2, [%[w2]], #16\n\t"                                                   \
    "vmladav" op ".s8 %[a1], q0, q3\n\t"                                             \
    "vmladav" op ".s8 %[b1], q1, q3\n\t"                                             \
    "vldrb.8 q3, [%[w3]], #16\n\t"                                                   \
    "vmladav" op ".s8 %[a2], q0, q2\n\t"                                             \
    "vmladav" op ".s8 %[b2], q1, q2\n\t"                                             \
    "vmladav" op ".s8 %[a3], q0, q3\n\t"                                             \
    "vmladav" op ".s8 %[b3], q1, q3\n\t"

/* The eight dot products into buf (8 words): window 0's (of the pair at x), then window
 * 1's, each the four channels' (rows w0..w3); `chunks` >= 1. Written in assembly: the
 * compiler, given the intrinsics, spilled accumulators to the stack inside the loop. The
 * eight accumulators take every even register (r0 to r12 and LR), so the loop counts in
 * another (SUBS and BNE, not LE), two chunks a pass; an even count's second chunk is
 * peeled with the first. A function of its own: with every general register an operand,
 * GCC could not keep an inlining caller's values around it. The sums are stored to buf
 * (STRD) for the caller to load as two vectors: VMOV of two registers to two lanes
 * (VMOV Qd[2], Qd[0], Rt, Rt2) gave other lanes under QEMU than the assembler's syntax
 * says, so it is not used. Marked unused: a file that includes the header for its
 * chunk macro alone does not warn. */
static __attribute__((noinline, unused)) void
tvmk_cm_mve_mm_2x4(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2,
                   const int8_t *w3, int32_t chunks, int32_t *buf)
{
    register int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4");
    register int32_t a3 __asm__("r6"), b0 __asm__("r8"), b1 __asm__("r10");
    register int32_t b2 __asm__("r12"), b3 __asm__("r14");
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
        "ldr %[pairs], %[buf]\n\t" /* the count is spent: its register holds buf */
        "strd %[a0], %[a1], [%[pairs]]\n\t"
        "strd %[a2], %[a3], [%[pairs], #8]\n\t"
        "strd %[b0], %[b1], [%[pairs], #16]\n\t"
        "strd %[b2], %[b3], [%[pairs], #24]\n\t"
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [b0] "=&r"(b0),
          [b1] "=&r"(b1), [b2] "=&r"(b2), [b3] "=&r"(b3), [x] "+r"(x), [w0] "+r"(w0),
          [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [pairs] "+r"(pairs)
        : [buf] "m"(buf) /* its address: in memory, needing no register */
        : "q0", "q1", "q2", "q3", "memory", "cc");
}

#endif

#endif /* TVMK_CM_MVE_MM24_H_ */
