/*
 * tvmdev portable kernels: Gemm, Y = alpha * op(A) @ op(B) + beta * C (ONNX semantics).
 *
 * Blocked for caches: a KC x NC block of op(B) and an MR x KC sliver of op(A) are packed
 * into one fixed-size stack buffer (TVMK_GEMM_PACK_BYTES), then an MR x NR
 * register-blocked micro-kernel computes each output tile. The micro-kernel is plain C:
 * its accumulators are a local array that the compiler keeps in vector registers, and
 * its loops are shaped so that GCC vectorises them at -O2 and -O3 without spilling.
 * Zero padding in the packed buffers makes every micro-kernel call a full tile; the
 * writeback stores only the valid part, and applies alpha, beta and C: the first K block
 * stores beta * C + alpha * acc (C is read exactly where Y is written, so C may alias Y),
 * the later ones add alpha * acc.
 *
 * Tuning macros (override with -D): TVMK_GEMM_PACK_BYTES (stack bytes for packing),
 * TVMK_GEMM_MR (<= 8) / TVMK_GEMM_NR (micro-tile) and TVMK_GEMM_KC (K block). Cortex-M
 * targets default to a 4 KiB buffer and a 4 x 4 tile, other targets to 32 KiB and 5 x 16.
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

#ifndef TVMK_GEMM_PACK_BYTES
#ifdef TVMK_GEMM_SMALL_TARGET
#define TVMK_GEMM_PACK_BYTES 4096
#else
#define TVMK_GEMM_PACK_BYTES 32768
#endif
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

#define TVMK_GEMM_PACK_FLOATS ((int32_t)(TVMK_GEMM_PACK_BYTES / sizeof(float)))

#if TVMK_GEMM_PACK_BYTES < 4 * (TVMK_GEMM_MR + TVMK_GEMM_NR) * 8
#error "TVMK_GEMM_PACK_BYTES is too small for the micro-tile"
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

int32_t tvmk_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                      const struct tvmk_gemm_params *params, void *resource_handle)
{
    /* One buffer: the MR x KC sliver of A, then the KC x NC block of B. */
    float pack[TVMK_GEMM_PACK_FLOATS];
    float acc[TVMK_GEMM_MR * TVMK_GEMM_NR];
    int32_t M, N, K, kc_max, nc_max, jc, pc, ic, jr;
    float *apack;
    float *bpack;

    (void)resource_handle;
    if (A == NULL || B == NULL || Y == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    M = params->M;
    N = params->N;
    K = params->K;
    if (M < 0 || N < 0 || K < 0) {
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

    /* Split the buffer: KC is capped so that at least one NR strip of B fits. */
    kc_max = TVMK_GEMM_KC;
    if (kc_max > TVMK_GEMM_PACK_FLOATS / (TVMK_GEMM_MR + TVMK_GEMM_NR)) {
        kc_max = TVMK_GEMM_PACK_FLOATS / (TVMK_GEMM_MR + TVMK_GEMM_NR);
    }
    if (kc_max > K) {
        kc_max = K;
    }
    nc_max = (TVMK_GEMM_PACK_FLOATS - TVMK_GEMM_MR * kc_max) / kc_max;
    nc_max -= nc_max % TVMK_GEMM_NR;
    apack = pack;
    bpack = pack + TVMK_GEMM_MR * kc_max;

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
