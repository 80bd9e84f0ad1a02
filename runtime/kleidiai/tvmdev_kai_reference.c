/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's reference micro-kernels (see tvmdev_kai_reference.h). Packed RHS layout of
 * every family: for each block of nr columns, nr bias values, then K rows of nr values
 * (columns past N are zero). Packed LHS layout of the SME-like families: for each block
 * of mr rows, K columns of mr values (rows past M are zero).
 */
#include <stddef.h>
#include <string.h>

#include "tvmdev_kai_reference.h"

#define GEOMETRY(tag, M_STEP, N_STEP, NR)                                                  \
    static size_t tag##_m_step(void) { return M_STEP; }                                    \
    static size_t tag##_n_step(void) { return N_STEP; }                                    \
    static size_t tag##_nr(void) { return NR; }                                            \
    static size_t tag##_rhs_packed_offset(size_t n_idx, size_t k)                          \
    {                                                                                      \
        return (n_idx / NR) * NR * (k + 1U) * sizeof(float);                               \
    }                                                                                      \
    static size_t tag##_rhs_packed_size(size_t n, size_t k)                                \
    {                                                                                      \
        return tag##_rhs_packed_offset(n + NR - 1U, k);                                    \
    }

/* The SME-like families also pack the LHS, in blocks of MR rows. */
#define PACKED_LHS(tag, MR)                                                                \
    static size_t tag##_mr(void) { return MR; }                                            \
    static size_t tag##_lhs_packed_offset(size_t m_idx, size_t k)                          \
    {                                                                                      \
        return (m_idx / MR) * MR * k * sizeof(float);                                      \
    }

/* A simulated SME vector length of 128 bits: 4 floats, so 2VL = 8; SME2 at 256 bits. */
GEOMETRY(sme2, 16, 16, 16)
GEOMETRY(sme, 8, 8, 8)
GEOMETRY(neon, 6, 8, 8)
PACKED_LHS(sme2, 16)
PACKED_LHS(sme, 8)

static size_t one(void)
{
    return 1;
}

static size_t lhs_packed_size(size_t m, size_t k, size_t mr, size_t kr, size_t sr)
{
    (void)kr;
    (void)sr;
    return (m + mr - 1U) / mr * mr * k * sizeof(float);
}

static void lhs_pack(size_t m, size_t k, size_t mr, size_t kr, size_t sr, size_t m_idx_start,
                     const void *lhs, size_t lhs_stride_row, void *lhs_packed)
{
    const uint8_t *src = (const uint8_t *)lhs;
    float *dst = (float *)lhs_packed;
    size_t blocks = (m + mr - 1U) / mr, b, r, kk;

    (void)kr;
    (void)sr;
    (void)m_idx_start;
    for (b = 0; b < blocks; b++) {
        for (kk = 0; kk < k; kk++) {
            for (r = 0; r < mr; r++) {
                const size_t row = b * mr + r;

                dst[(b * k + kk) * mr + r] =
                    row < m ? ((const float *)(const void *)(src + row * lhs_stride_row))[kk] : 0.0f;
            }
        }
    }
}

/* Packs a K x N (kxn) or N x K (nxk) RHS; element (kk, n) is read through at(). */
static void rhs_pack(size_t n, size_t k, size_t nr, size_t rhs_stride, const void *rhs,
                     const void *bias, void *rhs_packed, int nxk)
{
    const uint8_t *src = (const uint8_t *)rhs;
    const float *b = (const float *)bias;
    float *dst = (float *)rhs_packed;
    size_t blocks = (n + nr - 1U) / nr, blk, c, kk;

    for (blk = 0; blk < blocks; blk++) {
        float *out = dst + blk * nr * (k + 1U);

        for (c = 0; c < nr; c++) {
            out[c] = blk * nr + c < n ? b[blk * nr + c] : 0.0f;
        }
        for (kk = 0; kk < k; kk++) {
            for (c = 0; c < nr; c++) {
                const size_t col = blk * nr + c;
                float v = 0.0f;

                if (col < n) {
                    v = nxk ? ((const float *)(const void *)(src + col * rhs_stride))[kk]
                            : ((const float *)(const void *)(src + kk * rhs_stride))[col];
                }
                out[nr + kk * nr + c] = v;
            }
        }
    }
}

static float clamp(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* dst(i, j) = bias(j) + sum_kk lhs(i, kk) * rhs(kk, j), through the packed layouts. */
static void run(size_t m, size_t n, size_t k, const float *lhs_packed, size_t mr,
                const float *lhs_plain, size_t lhs_stride, const float *rhs_packed, size_t nr,
                void *dst, size_t dst_stride_row, size_t dst_stride_col, float lo, float hi)
{
    size_t i, j, kk;

    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            const float *blk = rhs_packed + (j / nr) * nr * (k + 1U);
            float acc = blk[j % nr];

            for (kk = 0; kk < k; kk++) {
                const float a = lhs_packed != NULL
                                    ? lhs_packed[((i / mr) * k + kk) * mr + i % mr]
                                    : lhs_plain[i * (lhs_stride / sizeof(float)) + kk];

                acc += a * blk[nr + kk * nr + j % nr];
            }
            *(float *)(void *)((uint8_t *)dst + i * dst_stride_row + j * dst_stride_col) =
                clamp(acc, lo, hi);
        }
    }
}

#define RUN_PACKED(tag, MR, NR)                                                            \
    static void tag##_run_packed(size_t m, size_t n, size_t k, const void *lhs_packed,     \
                                 const void *rhs_packed, void *dst, size_t dst_stride_row, \
                                 size_t dst_stride_col, float lo, float hi)                \
    {                                                                                      \
        run(m, n, k, (const float *)lhs_packed, MR, NULL, 0, (const float *)rhs_packed,    \
            NR, dst, dst_stride_row, dst_stride_col, lo, hi);                              \
    }

#define PACK(tag, layout, NXK)                                                             \
    static void tag##_pack_##layout(size_t g, size_t n, size_t k, size_t nr, size_t kr,    \
                                    size_t sr, size_t stride, const void *rhs,             \
                                    const void *bias, const void *scale, void *packed,     \
                                    size_t extra, const void *params)                      \
    {                                                                                      \
        (void)g, (void)kr, (void)sr, (void)scale, (void)extra, (void)params;              \
        rhs_pack(n, k, nr, stride, rhs, bias, packed, NXK);                                \
    }

RUN_PACKED(sme2, 16, 16)
RUN_PACKED(sme, 8, 8)
PACK(sme2, kxn, 0)
PACK(sme2, nxk, 1)
PACK(sme, kxn, 0)
PACK(sme, nxk, 1)
PACK(neon, kxn, 0)

static void neon_run_plain(size_t m, size_t n, size_t k, const void *lhs, size_t lhs_stride,
                           const void *rhs_packed, void *dst, size_t dst_stride_row,
                           size_t dst_stride_col, float lo, float hi)
{
    run(m, n, k, NULL, 1, (const float *)lhs, lhs_stride, (const float *)rhs_packed, 8, dst,
        dst_stride_row, dst_stride_col, lo, hi);
}

const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_sme2 = {
    "reference:sme2_mopa", TVMDEV_KAI_SME2, sme2_m_step, sme2_n_step, sme2_mr, sme2_nr, one, one,
    sme2_lhs_packed_offset, sme2_rhs_packed_offset, sme2_run_packed, NULL, lhs_packed_size,
    lhs_pack, sme2_rhs_packed_size, sme2_pack_kxn, sme2_rhs_packed_size, sme2_pack_nxk,
};

const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_sme = {
    "reference:sme_mopa", TVMDEV_KAI_SME, sme_m_step, sme_n_step, sme_mr, sme_nr, one, one,
    sme_lhs_packed_offset, sme_rhs_packed_offset, sme_run_packed, NULL, lhs_packed_size,
    lhs_pack, sme_rhs_packed_size, sme_pack_kxn, sme_rhs_packed_size, sme_pack_nxk,
};

/* Like KleidiAI's NEON f32 kernel: a plain LHS, and no transposed RHS packing. */
const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_neon = {
    "reference:neon_mla", TVMDEV_KAI_NEON, neon_m_step, neon_n_step, NULL, neon_nr, one, one,
    NULL, neon_rhs_packed_offset, NULL, neon_run_plain, NULL, NULL, neon_rhs_packed_size,
    neon_pack_kxn, NULL, NULL,
};

/*
 * int4 families. The reference "quantising" LHS pack keeps the floats (in mr-row blocks),
 * and the RHS pack dequantises the 4-bit rows into the float layout above, so the
 * reference result is the float product with the dequantised weights.
 */
static float bf16_to_f32(uint16_t bits)
{
    union {
        uint32_t u;
        float f;
    } v;

    v.u = (uint32_t)bits << 16;
    return v.f;
}

static void q4_lhs_pack(size_t m, size_t k, size_t mr, size_t kr, size_t sr, size_t m_idx_start,
                        const float *lhs, size_t lhs_stride, void *lhs_packed)
{
    lhs_pack(m, k, mr, kr, sr, m_idx_start, lhs, lhs_stride, lhs_packed);
}

static void q4_rhs_pack(size_t n, size_t k, size_t nr, size_t kr, size_t sr, size_t bl,
                        const uint8_t *rhs, size_t rhs_stride, const float *bias,
                        const uint16_t *scales, size_t scale_stride, void *rhs_packed)
{
    float *dst = (float *)rhs_packed;
    size_t blocks = (n + nr - 1U) / nr, blk, c, kk;

    (void)kr;
    (void)sr;
    for (blk = 0; blk < blocks; blk++) {
        float *out = dst + blk * nr * (k + 1U);

        for (c = 0; c < nr; c++) {
            const size_t col = blk * nr + c;

            out[c] = (col < n && bias != NULL) ? bias[col] : 0.0f;
            for (kk = 0; kk < k; kk++) {
                float v = 0.0f;

                if (col < n) {
                    const uint8_t byte = rhs[col * rhs_stride + kk / 2U];
                    const int q = (int)((kk & 1U) ? (byte >> 4) : (byte & 0x0FU)) - 8;
                    const uint16_t *row_scales =
                        (const uint16_t *)(const void *)((const uint8_t *)scales +
                                                         col * scale_stride);

                    v = (float)q * bf16_to_f32(row_scales[kk / bl]);
                }
                out[nr + kk * nr + c] = v;
            }
        }
    }
}

#define Q4_REFERENCE(tag, name, feature, M_STEP, N_STEP, MR, NR)                           \
    static size_t tag##_m_step(void) { return M_STEP; }                                    \
    static size_t tag##_n_step(void) { return N_STEP; }                                    \
    static size_t tag##_mr(void) { return MR; }                                            \
    static size_t tag##_nr(void) { return NR; }                                            \
    static size_t tag##_lhs_packed_offset(size_t m_idx, size_t k)                          \
    {                                                                                      \
        return (m_idx / MR) * MR * k * sizeof(float);                                      \
    }                                                                                      \
    static size_t tag##_rhs_packed_offset(size_t n_idx, size_t k, size_t bl)               \
    {                                                                                      \
        (void)bl;                                                                          \
        return (n_idx / NR) * NR * (k + 1U) * sizeof(float);                               \
    }                                                                                      \
    static size_t tag##_rhs_packed_size(size_t n, size_t k, size_t nr, size_t kr,          \
                                        size_t sr, size_t bl)                              \
    {                                                                                      \
        (void)nr, (void)kr, (void)sr;                                                      \
        return tag##_rhs_packed_offset(n + NR - 1U, k, bl);                                \
    }                                                                                      \
    static void tag##_run(size_t m, size_t n, size_t k, size_t bl, const void *lhs_packed, \
                          const void *rhs_packed, float *dst, size_t dst_stride_row,       \
                          size_t dst_stride_col, float lo, float hi)                       \
    {                                                                                      \
        (void)bl;                                                                          \
        run(m, n, k, (const float *)lhs_packed, MR, NULL, 0, (const float *)rhs_packed,    \
            NR, dst, dst_stride_row, dst_stride_col, lo, hi);                              \
    }                                                                                      \
    const struct tvmdev_kai_q4_ukernel tvmdev_kai_reference_##tag = {                      \
        name, feature, tag##_m_step, tag##_n_step, tag##_mr, tag##_nr, one, one,           \
        tag##_lhs_packed_offset, tag##_rhs_packed_offset, tag##_run, lhs_packed_size,      \
        q4_lhs_pack, tag##_rhs_packed_size, q4_rhs_pack,                                   \
    };

/* The geometries of the i8mm (16 x 4 tiles, mr 4) and dotprod (1 x 4, mr 1) kernels. */
Q4_REFERENCE(q4_i8mm, "reference:q4_i8mm", TVMDEV_KAI_I8MM, 16, 4, 4, 4)
Q4_REFERENCE(q4_dotprod, "reference:q4_dotprod", TVMDEV_KAI_DOTPROD, 1, 4, 1, 4)
