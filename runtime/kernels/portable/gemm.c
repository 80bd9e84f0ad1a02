/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Gemm, Y = alpha * op(A) @ op(B) + beta * C (ONNX semantics).
 *
 * Blocked for caches: a KC x NC block of op(B) and an MR x KC sliver of op(A) are packed
 * into the call's scratch (params->scratch, params->scratch_bytes: a region of the
 * workspace that tvmdev's memory planner gives the call), then an MR x NR
 * register-blocked micro-kernel computes each output tile. The micro-kernel is plain C:
 * its accumulators are a local array that the compiler keeps in vector registers, and
 * its loops are shaped so that GCC vectorises them at -O2 and -O3 without spilling.
 * Zero padding in the packed buffers makes every micro-kernel call a full tile; the
 * writeback stores only the valid part, and applies alpha, beta and C: the first K block
 * stores beta * C + alpha * acc (C is read exactly where Y is written, so C may alias Y),
 * the later ones add alpha * acc.
 *
 * The scratch decides only NC, the columns of op(B) packed at a time (as many whole NR
 * strips as fit, at most all of them: tvmk_gemm_scratch_bytes). K is always cut into
 * blocks of KC, so every output element is the same sum in the same order whatever the
 * scratch: the results are identical bit for bit. With less scratch than one strip needs
 * (none at all, say) the kernel computes each element directly, in that same order.
 *
 * Tuning macros (override with -D): TVMK_GEMM_MR (<= 8) / TVMK_GEMM_NR (micro-tile) and
 * TVMK_GEMM_KC (K block). Cortex-M targets default to a 4 x 4 tile, other targets to
 * 5 x 16; a board file gives tvmdev's planner the same figures (portable_gemm).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "tvmk_portable.h"

#if (defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') || defined(__ARM_ARCH_6M__) || \
    defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_BASE__) || \
    defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define TVMK_GEMM_SMALL_TARGET 1
#endif

#ifndef TVMK_GEMM_MR
#ifdef TVMK_GEMM_SMALL_TARGET
#define TVMK_GEMM_MR 4
#else
#define TVMK_GEMM_MR 5 /* 10 accumulators + 5 broadcasts fit the 16 AVX2 registers */
#endif
#endif

#ifndef TVMK_GEMM_NR
#ifdef TVMK_GEMM_SMALL_TARGET
#define TVMK_GEMM_NR 4
#else
#define TVMK_GEMM_NR 16
#endif
#endif

#ifndef TVMK_GEMM_KC
#define TVMK_GEMM_KC 64
#endif

#if TVMK_GEMM_MR < 1 || TVMK_GEMM_NR < 1 || TVMK_GEMM_KC < 1
#error "TVMK_GEMM_MR, TVMK_GEMM_NR and TVMK_GEMM_KC must be at least 1"
#endif

/* a * b + c, fused when the target has a fast single-precision FMA (then fmaf is one
 * instruction; GCC and clang call libm for it when not optimising, so not there). */
#if (defined(FP_FAST_FMAF) || defined(__FP_FAST_FMAF)) && \
    (!defined(__GNUC__) || defined(__OPTIMIZE__))
#define TVMK_GEMM_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define TVMK_GEMM_MADD(a, b, c) ((a) * (b) + (c))
#endif

/* acc[i][j] += a[i] * bj for each row i < MR, written out so that the rows are
 * straight-line code at every optimisation level (MR <= 8). */
#if TVMK_GEMM_MR > 8
#error "TVMK_GEMM_MR must be at most 8"
#endif
#define TVMK_GEMM_ROW(i) acc[i][j] = TVMK_GEMM_MADD(a[i], bj, acc[i][j]);
#if TVMK_GEMM_MR > 1
#define TVMK_GEMM_ROW1 TVMK_GEMM_ROW(1)
#else
#define TVMK_GEMM_ROW1
#endif
#if TVMK_GEMM_MR > 2
#define TVMK_GEMM_ROW2 TVMK_GEMM_ROW(2)
#else
#define TVMK_GEMM_ROW2
#endif
#if TVMK_GEMM_MR > 3
#define TVMK_GEMM_ROW3 TVMK_GEMM_ROW(3)
#else
#define TVMK_GEMM_ROW3
#endif
#if TVMK_GEMM_MR > 4
#define TVMK_GEMM_ROW4 TVMK_GEMM_ROW(4)
#else
#define TVMK_GEMM_ROW4
#endif
#if TVMK_GEMM_MR > 5
#define TVMK_GEMM_ROW5 TVMK_GEMM_ROW(5)
#else
#define TVMK_GEMM_ROW5
#endif
#if TVMK_GEMM_MR > 6
#define TVMK_GEMM_ROW6 TVMK_GEMM_ROW(6)
#else
#define TVMK_GEMM_ROW6
#endif
#if TVMK_GEMM_MR > 7
#define TVMK_GEMM_ROW7 TVMK_GEMM_ROW(7)
#else
#define TVMK_GEMM_ROW7
#endif
#define TVMK_GEMM_ROWS                                                                    \
    TVMK_GEMM_ROW(0)                                                                      \
    TVMK_GEMM_ROW1 TVMK_GEMM_ROW2 TVMK_GEMM_ROW3 TVMK_GEMM_ROW4 TVMK_GEMM_ROW5             \
    TVMK_GEMM_ROW6 TVMK_GEMM_ROW7

/* out (MR x NR, row-major) = sum over k < kc of a[k][i] * b[k][j], with a packed as
 * kc x MR and b as kc x NR. The column loop is split in two halves: each half is one
 * vector wide on the host, and two inner loops keep the compiler from unrolling and
 * jamming the k loop, which would spill the accumulators out of registers. */
static void tvmk_gemm_micro(int32_t kc, const float *restrict a, const float *restrict b,
                            float *restrict out)
{
    float acc[TVMK_GEMM_MR][TVMK_GEMM_NR];
    int32_t i, j, k;

    for (i = 0; i < TVMK_GEMM_MR; ++i) {
        for (j = 0; j < TVMK_GEMM_NR; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (k = 0; k < kc; ++k) {
        for (j = 0; j < TVMK_GEMM_NR / 2; ++j) {
            const float bj = b[j];
            TVMK_GEMM_ROWS
        }
        for (j = TVMK_GEMM_NR / 2; j < TVMK_GEMM_NR; ++j) {
            const float bj = b[j];
            TVMK_GEMM_ROWS
        }
        a += TVMK_GEMM_MR;
        b += TVMK_GEMM_NR;
    }
    for (i = 0; i < TVMK_GEMM_MR; ++i) {
        for (j = 0; j < TVMK_GEMM_NR; ++j) {
            out[i * TVMK_GEMM_NR + j] = acc[i][j];
        }
    }
}

/* Packs op(B)[p0 .. p0+kc) x [j0 .. j0+nc) as strips of kc x NR, zero-padding columns
 * past nc. */
static void tvmk_gemm_pack_b(const float *B, int32_t N, int32_t K, int32_t trans_b,
                             int32_t p0, int32_t kc, int32_t j0, int32_t nc, float *restrict dst)
{
    int32_t jr, k, j;

    for (jr = 0; jr < nc; jr += TVMK_GEMM_NR) {
        const int32_t nr = (nc - jr < TVMK_GEMM_NR) ? nc - jr : TVMK_GEMM_NR;
        if (!trans_b) {
            const float *src = B + (size_t)p0 * (size_t)N + (size_t)(j0 + jr);
            if (nr == TVMK_GEMM_NR) {
                for (k = 0; k < kc; ++k) {
                    memcpy(dst, src, sizeof(float) * TVMK_GEMM_NR);
                    dst += TVMK_GEMM_NR;
                    src += N;
                }
            } else {
                for (k = 0; k < kc; ++k) {
                    for (j = 0; j < nr; ++j) {
                        dst[j] = src[j];
                    }
                    for (; j < TVMK_GEMM_NR; ++j) {
                        dst[j] = 0.0f;
                    }
                    dst += TVMK_GEMM_NR;
                    src += N;
                }
            }
        } else {
            /* B is N x K: op(B)[k][j] = B[j * K + k]. */
            const float *src = B + (size_t)(j0 + jr) * (size_t)K + (size_t)p0;
            for (k = 0; k < kc; ++k) {
                for (j = 0; j < nr; ++j) {
                    dst[j] = src[(size_t)j * (size_t)K + (size_t)k];
                }
                for (; j < TVMK_GEMM_NR; ++j) {
                    dst[j] = 0.0f;
                }
                dst += TVMK_GEMM_NR;
            }
        }
    }
}

/* Packs op(A)[i0 .. i0+mr) x [p0 .. p0+kc) as kc x MR, zero-padding rows past mr. */
static void tvmk_gemm_pack_a(const float *A, int32_t M, int32_t K, int32_t trans_a,
                             int32_t i0, int32_t mr, int32_t p0, int32_t kc, float *restrict dst)
{
    int32_t i, k;

    if (trans_a) {
        /* A is K x M: op(A)[i][k] = A[k * M + i]; rows of the sliver are contiguous. */
        const float *src = A + (size_t)p0 * (size_t)M + (size_t)i0;
        for (k = 0; k < kc; ++k) {
            for (i = 0; i < mr; ++i) {
                dst[i] = src[i];
            }
            for (; i < TVMK_GEMM_MR; ++i) {
                dst[i] = 0.0f;
            }
            dst += TVMK_GEMM_MR;
            src += M;
        }
    } else {
        const float *src = A + (size_t)i0 * (size_t)K + (size_t)p0;
        if (mr == TVMK_GEMM_MR) {
            for (k = 0; k < kc; ++k) {
                for (i = 0; i < TVMK_GEMM_MR; ++i) {
                    dst[i] = src[(size_t)i * (size_t)K + (size_t)k];
                }
                dst += TVMK_GEMM_MR;
            }
        } else {
            for (k = 0; k < kc; ++k) {
                for (i = 0; i < mr; ++i) {
                    dst[i] = src[(size_t)i * (size_t)K + (size_t)k];
                }
                for (; i < TVMK_GEMM_MR; ++i) {
                    dst[i] = 0.0f;
                }
                dst += TVMK_GEMM_MR;
            }
        }
    }
}

/* Stores the valid mr x nr part of a tile at Y[i0.., j0..]: Y = beta * C + alpha * acc on
 * the first K block (C may be NULL), Y += alpha * acc on the later ones. */
static void tvmk_gemm_store(const float *restrict acc, int32_t mr, int32_t nr, float *Y,
                            int32_t N, int32_t i0, int32_t j0, int32_t first, const float *C,
                            const struct tvmk_gemm_params *p)
{
    const float alpha = p->alpha;
    int32_t i, j;

    for (i = 0; i < mr; ++i) {
        float *y = Y + (size_t)(i0 + i) * (size_t)N + (size_t)j0;
        const float *restrict t = acc + i * TVMK_GEMM_NR;
        if (!first && nr == TVMK_GEMM_NR) {
            /* The common case: a constant trip count vectorises at any -O level. */
            float *restrict yr = y;
            for (j = 0; j < TVMK_GEMM_NR; ++j) {
                yr[j] += alpha * t[j];
            }
        } else if (!first) {
            float *restrict yr = y;
            for (j = 0; j < nr; ++j) {
                yr[j] += alpha * t[j];
            }
        } else if (C == NULL) {
            float *restrict yr = y;
            for (j = 0; j < nr; ++j) {
                yr[j] = alpha * t[j];
            }
        } else {
            const float beta = p->beta;
            const float *c = C + (ptrdiff_t)(i0 + i) * p->c_stride_m +
                             (ptrdiff_t)j0 * p->c_stride_n;
            const ptrdiff_t sn = p->c_stride_n;
            for (j = 0; j < nr; ++j) {
                y[j] = beta * c[j * sn] + alpha * t[j];
            }
        }
    }
}

/* The K block: KC, or all of K when it is shorter. */
static int32_t tvmk_gemm_kc(int32_t K)
{
    return K < TVMK_GEMM_KC ? K : TVMK_GEMM_KC;
}

int32_t tvmk_gemm_scratch_bytes(int32_t M, int32_t N, int32_t K)
{
    int32_t kc, strips;

    if (M <= 0 || N <= 0 || K <= 0) {
        return 0;
    }
    kc = tvmk_gemm_kc(K);
    strips = (N + TVMK_GEMM_NR - 1) / TVMK_GEMM_NR;
    return (int32_t)sizeof(float) *
           (TVMK_GEMM_MR * TVMK_GEMM_NR + TVMK_GEMM_MR * kc + strips * TVMK_GEMM_NR * kc);
}

/* Without room to pack: each element of a K block summed in the micro-kernel's order
 * (from 0, k ascending, one multiply-add at a time) and stored as tvmk_gemm_store does,
 * so the results equal the packed path's. */
static void tvmk_gemm_direct(const float *A, const float *B, const float *C, float *Y,
                             const struct tvmk_gemm_params *p)
{
    const int32_t M = p->M, N = p->N, K = p->K, kc_max = tvmk_gemm_kc(K);
    const size_t sa_m = p->trans_a ? 1U : (size_t)K, sa_k = p->trans_a ? (size_t)M : 1U;
    const size_t sb_k = p->trans_b ? 1U : (size_t)N, sb_n = p->trans_b ? (size_t)K : 1U;
    int32_t pc, i, j, k;

    for (pc = 0; pc < K; pc += kc_max) {
        const int32_t kc = (K - pc < kc_max) ? K - pc : kc_max;
        for (i = 0; i < M; ++i) {
            for (j = 0; j < N; ++j) {
                const float *a = A + (size_t)i * sa_m + (size_t)pc * sa_k;
                const float *b = B + (size_t)pc * sb_k + (size_t)j * sb_n;
                float *y = Y + (size_t)i * (size_t)N + (size_t)j;
                float acc = 0.0f;

                for (k = 0; k < kc; ++k) {
                    acc = TVMK_GEMM_MADD(a[(size_t)k * sa_k], b[(size_t)k * sb_k], acc);
                }
                if (pc != 0) {
                    *y += p->alpha * acc;
                } else if (C == NULL) {
                    *y = p->alpha * acc;
                } else {
                    *y = p->beta * C[(ptrdiff_t)i * p->c_stride_m +
                                     (ptrdiff_t)j * p->c_stride_n] +
                         p->alpha * acc;
                }
            }
        }
    }
}

int32_t tvmk_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                      const struct tvmk_gemm_params *params, void *resource_handle)
{
    int32_t M, N, K, kc_max, nc_max, jc, pc, ic, jr;
    float *acc;
    float *apack;
    float *bpack;

    (void)resource_handle;
    if (A == NULL || B == NULL || Y == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    M = params->M;
    N = params->N;
    K = params->K;
    if (M < 0 || N < 0 || K < 0 || params->scratch_bytes < 0 ||
        (params->scratch == NULL && params->scratch_bytes != 0)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (M == 0 || N == 0) {
        return TVM_DEVICE_OK;
    }
    if (K == 0) {
        /* Empty product: Y = beta * C. */
        int32_t i, j;
        for (i = 0; i < M; ++i) {
            for (j = 0; j < N; ++j) {
                Y[(size_t)i * (size_t)N + (size_t)j] =
                    C == NULL ? 0.0f
                              : params->beta * C[(ptrdiff_t)i * params->c_stride_m +
                                                 (ptrdiff_t)j * params->c_stride_n];
            }
        }
        return TVM_DEVICE_OK;
    }

    /* The scratch, in floats: the MR x NR tile, the MR x KC sliver of A, then as many
     * KC x NR strips of B as fit (all of them at most). */
    kc_max = tvmk_gemm_kc(K);
    nc_max = ((params->scratch_bytes / (int32_t)sizeof(float)) - TVMK_GEMM_MR * TVMK_GEMM_NR -
              TVMK_GEMM_MR * kc_max) / (TVMK_GEMM_NR * kc_max) * TVMK_GEMM_NR;
    if (nc_max < TVMK_GEMM_NR) {
        tvmk_gemm_direct(A, B, C, Y, params);
        return TVM_DEVICE_OK;
    }
    acc = (float *)params->scratch;
    apack = acc + TVMK_GEMM_MR * TVMK_GEMM_NR;
    bpack = apack + TVMK_GEMM_MR * kc_max;

    for (jc = 0; jc < N; jc += nc_max) {
        const int32_t nc = (N - jc < nc_max) ? N - jc : nc_max;
        for (pc = 0; pc < K; pc += kc_max) {
            const int32_t kc = (K - pc < kc_max) ? K - pc : kc_max;
            tvmk_gemm_pack_b(B, N, K, params->trans_b, pc, kc, jc, nc, bpack);
            for (ic = 0; ic < M; ic += TVMK_GEMM_MR) {
                const int32_t mr = (M - ic < TVMK_GEMM_MR) ? M - ic : TVMK_GEMM_MR;
                tvmk_gemm_pack_a(A, M, K, params->trans_a, ic, mr, pc, kc, apack);
                for (jr = 0; jr < nc; jr += TVMK_GEMM_NR) {
                    const int32_t nr = (nc - jr < TVMK_GEMM_NR) ? nc - jr : TVMK_GEMM_NR;
                    tvmk_gemm_micro(kc, apack, bpack + (size_t)jr * (size_t)kc, acc);
                    tvmk_gemm_store(acc, mr, nr, Y, N, ic, jc + jr, pc == 0, C, params);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
