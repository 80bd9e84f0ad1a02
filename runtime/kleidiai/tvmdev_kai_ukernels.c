/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The float32 micro-kernel families and their dispatch by CPU feature: SME2 mopa, else
 * SME mopa, else NEON. With TVMDEV_KAI_REAL the tables point at KleidiAI (built from a
 * KleidiAI source tree); otherwise at tvmdev's reference micro-kernels.
 */
#include <stddef.h>

#include "tvmdev_kai.h"

#ifdef TVMDEV_KAI_REAL
#include "kai/ukernels/matmul/matmul_clamp_f32_f32_f32p/kai_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32p_f32p/kai_matmul_clamp_f32_f32p2vlx1_f32p2vlx1b_2vlx2vl_sme_mopa.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32p_f32p/kai_matmul_clamp_f32_f32p2vlx1_f32p2vlx1biasf32_sme2_mopa.h"
#include "kai/ukernels/matmul/pack/kai_lhs_pack_f32p2vlx1_f32_sme.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_f32p2vlx1biasf32_f32_f32_sme.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_f32p2vlx1biasf32_f32_f32_sme.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4c32p/kai_matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4c32p/kai_matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_16x4x32_neon_i8mm.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0.h"

#define SME_FAMILY(tag, kernel, feature)                                                   \
    static const struct tvmdev_kai_f32_ukernel tag = {                                     \
        "kleidiai:" #kernel,                                                               \
        feature,                                                                           \
        kai_get_m_step_##kernel,                                                           \
        kai_get_n_step_##kernel,                                                           \
        kai_get_mr_##kernel,                                                               \
        kai_get_nr_##kernel,                                                               \
        kai_get_kr_##kernel,                                                               \
        kai_get_sr_##kernel,                                                               \
        kai_get_lhs_packed_offset_##kernel,                                                \
        kai_get_rhs_packed_offset_##kernel,                                                \
        kai_run_##kernel,                                                                  \
        NULL,                                                                              \
        kai_get_lhs_packed_size_lhs_pack_f32p2vlx1_f32_sme,                                \
        kai_run_lhs_pack_f32p2vlx1_f32_sme,                                                \
        kai_get_rhs_packed_size_rhs_pack_kxn_f32p2vlx1biasf32_f32_f32_sme,                 \
        kai_run_rhs_pack_kxn_f32p2vlx1biasf32_f32_f32_sme,                                 \
        kai_get_rhs_packed_size_rhs_pack_nxk_f32p2vlx1biasf32_f32_f32_sme,                 \
        kai_run_rhs_pack_nxk_f32p2vlx1biasf32_f32_f32_sme,                                 \
    }

SME_FAMILY(sme2, matmul_clamp_f32_f32p2vlx1_f32p2vlx1biasf32_sme2_mopa, TVMDEV_KAI_SME2);
SME_FAMILY(sme, matmul_clamp_f32_f32p2vlx1_f32p2vlx1b_2vlx2vl_sme_mopa, TVMDEV_KAI_SME);

static const struct tvmdev_kai_f32_ukernel neon = {
    "kleidiai:matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla",
    TVMDEV_KAI_NEON,
    kai_get_m_step_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    kai_get_n_step_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    NULL,
    kai_get_nr_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    kai_get_kr_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    kai_get_sr_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    NULL,
    kai_get_rhs_packed_offset_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    NULL,
    kai_run_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla,
    NULL,
    NULL,
    kai_get_rhs_packed_size_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon,
    kai_run_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon,
    NULL,
    NULL,
};
/* KleidiAI's int4 RHS packing with tvmdev's fixed choices: zero points 1 and 8, bf16. */
static size_t q4_rhs_packed_size(size_t n, size_t k, size_t nr, size_t kr, size_t sr, size_t bl)
{
    return kai_get_rhs_packed_size_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(n, k, nr, kr, sr, bl,
                                                                     kai_dt_bf16);
}

static void q4_rhs_pack(size_t n, size_t k, size_t nr, size_t kr, size_t sr, size_t bl,
                        const uint8_t *rhs, size_t rhs_stride, const float *bias,
                        const uint16_t *scales, size_t scale_stride, void *rhs_packed)
{
    struct kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0_params params;

    params.lhs_zero_point = 1;
    params.rhs_zero_point = 8;
    params.scale_dt = kai_dt_bf16;
    kai_run_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(1, n, k, nr, kr, sr, bl, rhs, rhs_stride, bias,
                                              scales, scale_stride, rhs_packed, 0, &params);
}

#define Q4_FAMILY(tag, kernel, feature)                                                    \
    static const struct tvmdev_kai_q4_ukernel tag = {                                      \
        "kleidiai:" #kernel,                                                               \
        feature,                                                                           \
        kai_get_m_step_##kernel,                                                           \
        kai_get_n_step_##kernel,                                                           \
        kai_get_mr_##kernel,                                                               \
        kai_get_nr_##kernel,                                                               \
        kai_get_kr_##kernel,                                                               \
        kai_get_sr_##kernel,                                                               \
        kai_get_lhs_packed_offset_##kernel,                                                \
        kai_get_rhs_packed_offset_##kernel,                                                \
        kai_run_##kernel,                                                                  \
        kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32,                                \
        kai_run_lhs_quant_pack_qai8dxp_f32,                                                \
        q4_rhs_packed_size,                                                                \
        q4_rhs_pack,                                                                       \
    }

Q4_FAMILY(q4_i8mm, matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_16x4x32_neon_i8mm, TVMDEV_KAI_I8MM);
Q4_FAMILY(q4_dotprod, matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod,
          TVMDEV_KAI_DOTPROD);
#else
#include "tvmdev_kai_reference.h"

#define sme2 tvmdev_kai_reference_sme2
#define sme tvmdev_kai_reference_sme
#define neon tvmdev_kai_reference_neon
#define q4_i8mm tvmdev_kai_reference_q4_i8mm
#define q4_dotprod tvmdev_kai_reference_q4_dotprod
#endif

const struct tvmdev_kai_f32_ukernel *const tvmdev_kai_f32_ukernels[] = {&sme2, &sme, &neon};
const size_t tvmdev_kai_f32_ukernel_count =
    sizeof(tvmdev_kai_f32_ukernels) / sizeof(tvmdev_kai_f32_ukernels[0]);

const struct tvmdev_kai_f32_ukernel *tvmdev_kai_select_f32(uint32_t features)
{
    size_t i;

    for (i = 0; i < tvmdev_kai_f32_ukernel_count; i++) {
        const struct tvmdev_kai_f32_ukernel *uk = tvmdev_kai_f32_ukernels[i];

        if ((features & uk->features) == uk->features) {
            return uk;
        }
    }
    return NULL;
}

const struct tvmdev_kai_q4_ukernel *const tvmdev_kai_q4_ukernels[] = {&q4_i8mm, &q4_dotprod};
const size_t tvmdev_kai_q4_ukernel_count =
    sizeof(tvmdev_kai_q4_ukernels) / sizeof(tvmdev_kai_q4_ukernels[0]);

const struct tvmdev_kai_q4_ukernel *tvmdev_kai_select_q4(uint32_t features)
{
    size_t i;

    for (i = 0; i < tvmdev_kai_q4_ukernel_count; i++) {
        const struct tvmdev_kai_q4_ukernel *uk = tvmdev_kai_q4_ukernels[i];

        if ((features & uk->features) == uk->features) {
            return uk;
        }
    }
    return NULL;
}
