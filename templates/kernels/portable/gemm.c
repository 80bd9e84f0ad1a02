/*
 * tvmdev portable kernels: Gemm, Y = alpha * op(A) @ op(B) + beta * C (ONNX semantics).
 *
 * Blocked for caches: a K x N block of op(B) (KC x NC) and an MR x KC sliver of op(A)
 * are packed into one fixed-size stack buffer (TVMK_GEMM_PACK_BYTES), then an MR x NR
 * register-blocked micro-kernel, written as plain loops over local arrays that the
 * compiler vectorises, computes each output tile. Zero padding in the packed buffers
 * makes every micro-kernel call a full tile; the writeback stores only the valid part.
 * alpha, beta and C are applied in that writeback: the first K block stores
 * beta * C + alpha * acc (C is read only where Y is written, so C may alias Y), the
 * later ones add alpha * acc.
 *
 * Tuning macros (override with -D): TVMK_GEMM_PACK_BYTES (stack bytes for packing),
 * TVMK_GEMM_MR / TVMK_GEMM_NR (micro-tile) and TVMK_GEMM_KC (K block).
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

#define TVMK_GEMM_MR_ TVMK_GEMM_MR
#define TVMK_GEMM_NR_ TVMK_GEMM_NR
#define TVMK_GEMM_PACK_FLOATS ((int32_t)(TVMK_GEMM_PACK_BYTES / sizeof(float)))

#if TVMK_GEMM_PACK_BYTES < 4 * (TVMK_GEMM_MR + TVMK_GEMM_NR) * 8
#error "TVMK_GEMM_PACK_BYTES is too small for the micro-tile"
#endif

/* a * b + c, fused when the target has a fast single-precision FMA. */
#if defined(FP_FAST_FMAF) || defined(__FP_FAST_FMAF)
#define TVMK_GEMM_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define TVMK_GEMM_MADD(a, b, c) ((a) * (b) + (c))
#endif

/* out (MR x NR, row-major) = sum over k < kc of a[k][i] * b[k][j], with a packed as
 * kc x MR and b as kc x NR. The column loop is split in two halves: each half is one
 * vector wide on the host, and two inner loops keep the compiler from unrolling and
 * jamming the k loop, which would spill the accumulators out of registers. */
static void tvmk_gemm_micro(int32_t kc, const float *restrict a, const float *restrict b,
                            float *restrict out)
{
    float acc[TVMK_GEMM_MR_][TVMK_GEMM_NR_];
    int32_t i, j, k;

    for (i = 0; i < TVMK_GEMM_MR_; ++i) {
        for (j = 0; j < TVMK_GEMM_NR_; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (k = 0; k < kc; ++k) {
        for (j = 0; j < TVMK_GEMM_NR_ / 2; ++j) {
            const float bj = b[j];
            for (i = 0; i < TVMK_GEMM_MR_; ++i) {
                acc[i][j] = TVMK_GEMM_MADD(a[i], bj, acc[i][j]);
            }
        }
        for (j = TVMK_GEMM_NR_ / 2; j < TVMK_GEMM_NR_; ++j) {
            const float bj = b[j];
            for (i = 0; i < TVMK_GEMM_MR_; ++i) {
                acc[i][j] = TVMK_GEMM_MADD(a[i], bj, acc[i][j]);
            }
        }
        a += TVMK_GEMM_MR_;
        b += TVMK_GEMM_NR_;
    }
    for (i = 0; i < TVMK_GEMM_MR_; ++i) {
        for (j = 0; j < TVMK_GEMM_NR_; ++j) {
            out[i * TVMK_GEMM_NR_ + j] = acc[i][j];
        }
    }
}

/* Packs op(B)[p0 .. p0+kc) x [j0 .. j0+nc) as strips of kc x NR, zero-padding columns
 * past nc. */
static void tvmk_gemm_pack_b(const float *B, int32_t N, int32_t K, int32_t trans_b,
                             int32_t p0, int32_t kc, int32_t j0, int32_t nc, float *restrict dst)
{
    int32_t jr, k, j;

    for (jr = 0; jr < nc; jr += TVMK_GEMM_NR_) {
        const int32_t nr = (nc - jr < TVMK_GEMM_NR_) ? nc - jr : TVMK_GEMM_NR_;
        if (!trans_b) {
            const float *src = B + (size_t)p0 * (size_t)N + (size_t)(j0 + jr);
            if (nr == TVMK_GEMM_NR_) {
                for (k = 0; k < kc; ++k) {
                    memcpy(dst, src, sizeof(float) * TVMK_GEMM_NR_);
                    dst += TVMK_GEMM_NR_;
                    src += N;
                }
            } else {
                for (k = 0; k < kc; ++k) {
                    for (j = 0; j < nr; ++j) {
                        dst[j] = src[j];
                    }
                    for (; j < TVMK_GEMM_NR_; ++j) {
                        dst[j] = 0.0f;
                    }
                    dst += TVMK_GEMM_NR_;
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
                for (; j < TVMK_GEMM_NR_; ++j) {
                    dst[j] = 0.0f;
                }
                dst += TVMK_GEMM_NR_;
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
            for (; i < TVMK_GEMM_MR_; ++i) {
                dst[i] = 0.0f;
            }
            dst += TVMK_GEMM_MR_;
            src += M;
        }
    } else {
        const float *src = A + (size_t)i0 * (size_t)K + (size_t)p0;
        if (mr == TVMK_GEMM_MR_) {
            for (k = 0; k < kc; ++k) {
                for (i = 0; i < TVMK_GEMM_MR_; ++i) {
                    dst[i] = src[(size_t)i * (size_t)K + (size_t)k];
                }
                dst += TVMK_GEMM_MR_;
            }
        } else {
            for (k = 0; k < kc; ++k) {
                for (i = 0; i < mr; ++i) {
                    dst[i] = src[(size_t)i * (size_t)K + (size_t)k];
                }
                for (; i < TVMK_GEMM_MR_; ++i) {
                    dst[i] = 0.0f;
                }
                dst += TVMK_GEMM_MR_;
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
        const float *t = acc + i * TVMK_GEMM_NR_;
        if (!first) {
            for (j = 0; j < nr; ++j) {
                y[j] += alpha * t[j];
            }
        } else if (C == NULL) {
            for (j = 0; j < nr; ++j) {
                y[j] = alpha * t[j];
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
    float acc[TVMK_GEMM_MR_ * TVMK_GEMM_NR_];
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
    if (kc_max > TVMK_GEMM_PACK_FLOATS / (TVMK_GEMM_MR_ + TVMK_GEMM_NR_)) {
        kc_max = TVMK_GEMM_PACK_FLOATS / (TVMK_GEMM_MR_ + TVMK_GEMM_NR_);
    }
    if (kc_max > K) {
        kc_max = K;
    }
    nc_max = (TVMK_GEMM_PACK_FLOATS - TVMK_GEMM_MR_ * kc_max) / kc_max;
    nc_max -= nc_max % TVMK_GEMM_NR_;
    apack = pack;
    bpack = pack + TVMK_GEMM_MR_ * kc_max;

    for (jc = 0; jc < N; jc += nc_max) {
        const int32_t nc = (N - jc < nc_max) ? N - jc : nc_max;
        for (pc = 0; pc < K; pc += kc_max) {
            const int32_t kc = (K - pc < kc_max) ? K - pc : kc_max;
            tvmk_gemm_pack_b(B, N, K, params->trans_b, pc, kc, jc, nc, bpack);
            for (ic = 0; ic < M; ic += TVMK_GEMM_MR_) {
                const int32_t mr = (M - ic < TVMK_GEMM_MR_) ? M - ic : TVMK_GEMM_MR_;
                tvmk_gemm_pack_a(A, M, K, params->trans_a, ic, mr, pc, kc, apack);
                for (jr = 0; jr < nc; jr += TVMK_GEMM_NR_) {
                    const int32_t nr = (nc - jr < TVMK_GEMM_NR_) ? nc - jr : TVMK_GEMM_NR_;
                    tvmk_gemm_micro(kc, apack, bpack + (size_t)jr * (size_t)kc, acc);
                    tvmk_gemm_store(acc, mr, nr, Y, N, ic, jc + jr, pc == 0, C, params);
                }
            }
        }
    }
    return TVM_DEVICE_OK;
}
