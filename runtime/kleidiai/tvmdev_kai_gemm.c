/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gemm, matmul and fully_connected on KleidiAI micro-kernels, following ONNX Runtime's
 * MLAS integration:
 *
 * - Preconditions: M, N, K > 0; transA not set; transB only when B is a constant (packed
 *   once, transposed, by the family's nxk packing routine, or transposed here and packed
 *   by its kxn one when the family has no nxk packing). Anything else is declined and
 *   the next kernel of the chain (the portable one) serves the call.
 * - fully_connected is a gemm with B = weights transposed (the weights may change from
 *   call to call: then they are packed on every call), its bias packed with them and its
 *   activation the micro-kernel's clamp (RELU, RELU6, RELU_N1_TO_1); TANH is declined.
 * - A constant B is packed at its first use, with its bias when the bias can be fused,
 *   into the device's arena and kept; a B that changes is packed on every call. The LHS
 *   is packed where the family needs it.
 * - The output is cut into m_step x n_step tiles spread over the device's threads
 *   through the thread-pool hook; each tile is computed into a per-thread scratch and
 *   written back: a memcpy when alpha = 1 and no C term is left, else
 *   Y = alpha * tile + beta * C.
 * - A 4-bit block-quantised B (struct tvmk_q4c32) runs on the qai8dxp x qsi4c32p
 *   families (i8mm first, else dotprod): the LHS is quantised to int8 per row as it is
 *   packed, the RHS packed once with its bfloat16 block scales.
 */
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"
#include "tvmk_portable.h"

#define ALIGN 64U

struct job;
typedef void (*compute_fn)(const struct job *j, size_t m0, size_t n0, size_t mb, size_t nb,
                           float *tile);

struct job {
    const void *uk;            /* the family: f32 or q4 */
    compute_fn compute;        /* one tile into the scratch */
    size_t bl;                 /* q4: the block length */
    const float *A;
    const uint8_t *lhs_packed; /* NULL: plain LHS */
    const uint8_t *rhs_packed;
    float *Y;
    const float *C;            /* the C term left for the writeback, or NULL */
    const struct tvmk_gemm_params *p;
    float clamp_min, clamp_max; /* the micro-kernel's clamp (fused activations) */
    float *scratch;            /* threads x m_step x n_step floats */
    size_t m_step, n_step, m_tiles, n_tiles;
    uint32_t threads;
};

static size_t round_up(size_t x, size_t to)
{
    return (x + to - 1U) / to * to;
}

static void write_back(const struct job *j, const float *tile, size_t m0, size_t n0, size_t mb,
                       size_t nb)
{
    const struct tvmk_gemm_params *p = j->p;
    const size_t N = (size_t)p->N;
    size_t i, c;

    if (p->alpha == 1.0f && j->C == NULL) {
        if (nb == N) { /* whole rows: one contiguous block */
            memcpy(j->Y + m0 * N, tile, mb * nb * sizeof(float));
        } else {
            for (i = 0; i < mb; i++) {
                memcpy(j->Y + (m0 + i) * N + n0, tile + i * nb, nb * sizeof(float));
            }
        }
        return;
    }
    for (i = 0; i < mb; i++) {
        float *y = j->Y + (m0 + i) * N + n0;
        const float *t = tile + i * nb;

        for (c = 0; c < nb; c++) {
            float v = p->alpha * t[c];

            if (j->C != NULL) {
                v += p->beta * j->C[(m0 + i) * (size_t)p->c_stride_m +
                                    (n0 + c) * (size_t)p->c_stride_n];
            }
            y[c] = v;
        }
    }
}

/* Bytes of the arena above the packed constants; NULL when they do not fit. */
static uint8_t *scratch_alloc(tvm_device_kleidiai_t *dev, size_t *cursor, size_t bytes)
{
    size_t at = round_up(*cursor, ALIGN);

    if (at + bytes > dev->arena_size) {
        return NULL;
    }
    *cursor = at + bytes;
    return dev->arena + at;
}

static int32_t decline(tvm_device_kleidiai_t *dev)
{
    if (dev != NULL) {
        dev->stats.declined++;
    }
    return TVM_DEVICE_DECLINED;
}

static void compute_f32(const struct job *j, size_t m0, size_t n0, size_t mb, size_t nb,
                        float *tile)
{
    const struct tvmdev_kai_f32_ukernel *uk = (const struct tvmdev_kai_f32_ukernel *)j->uk;
    const size_t K = (size_t)j->p->K;
    const void *rhs = j->rhs_packed + uk->get_rhs_packed_offset(n0, K);

    if (j->lhs_packed != NULL) {
        uk->run_packed_lhs(mb, nb, K, j->lhs_packed + uk->get_lhs_packed_offset(m0, K), rhs, tile,
                           nb * sizeof(float), sizeof(float), j->clamp_min, j->clamp_max);
    } else {
        uk->run_plain_lhs(mb, nb, K, j->A + m0 * K, K * sizeof(float), rhs, tile,
                          nb * sizeof(float), sizeof(float), j->clamp_min, j->clamp_max);
    }
}

static void compute_q4(const struct job *j, size_t m0, size_t n0, size_t mb, size_t nb,
                       float *tile)
{
    const struct tvmdev_kai_q4_ukernel *uk = (const struct tvmdev_kai_q4_ukernel *)j->uk;
    const size_t K = (size_t)j->p->K;

    uk->run(mb, nb, K, j->bl, j->lhs_packed + uk->get_lhs_packed_offset(m0, K),
            j->rhs_packed + uk->get_rhs_packed_offset(n0, K, j->bl), tile, nb * sizeof(float),
            sizeof(float), j->clamp_min, j->clamp_max);
}

static void run_tiles(void *arg, uint32_t thread)
{
    const struct job *j = (const struct job *)arg;
    float *tile = j->scratch + (size_t)thread * j->m_step * j->n_step;
    size_t t;

    for (t = thread; t < j->m_tiles * j->n_tiles; t += j->threads) {
        const size_t m0 = (t / j->n_tiles) * j->m_step;
        const size_t n0 = (t % j->n_tiles) * j->n_step;
        const size_t mb = (size_t)j->p->M - m0 < j->m_step ? (size_t)j->p->M - m0 : j->m_step;
        const size_t nb = (size_t)j->p->N - n0 < j->n_step ? (size_t)j->p->N - n0 : j->n_step;

        j->compute(j, m0, n0, mb, nb, tile);
        write_back(j, tile, m0, n0, mb, nb);
    }
}

/* Spreads the tiles over the device's threads; the job's steps and buffers are set. */
static int32_t run_job(tvm_device_kleidiai_t *dev, struct job *j, size_t *cursor,
                       const char *name)
{
    j->m_tiles = ((size_t)j->p->M + j->m_step - 1U) / j->m_step;
    j->n_tiles = ((size_t)j->p->N + j->n_step - 1U) / j->n_step;
    j->threads = dev->threads;
    j->scratch = (float *)(void *)scratch_alloc(dev, cursor, (size_t)j->threads * j->m_step *
                                                                 j->n_step * sizeof(float));
    if (j->scratch == NULL) {
        return decline(dev);
    }
    if (j->threads > 1U) {
        dev->parallel(dev->parallel_ctx, j->threads, run_tiles, j);
    } else {
        run_tiles(j, 0);
    }
    dev->stats.calls++;
    dev->stats.tiles += (uint32_t)(j->m_tiles * j->n_tiles);
    dev->stats.last_ukernel = name;
    return TVM_DEVICE_OK;
}

/* The C term of the writeback, or the bias to pack with B (a row vector added as it is). */
static const float *split_c(struct job *j, const float *C, const struct tvmk_gemm_params *p)
{
    j->C = (C != NULL && p->beta != 0.0f) ? C : NULL;
    if (j->C != NULL && p->alpha == 1.0f && p->beta == 1.0f && p->c_stride_m == 0 &&
        p->c_stride_n == 1) {
        j->C = NULL;
        return C;
    }
    return NULL;
}

/* The packed form of a constant (rhs) the device already keeps for this layout, or NULL. */
static const uint8_t *find_slot(const tvm_device_kleidiai_t *dev, const void *rhs,
                                const float *bias, const void *uk, size_t n, size_t k,
                                uint32_t transposed)
{
    uint32_t i;

    for (i = 0; i < dev->n_slots; i++) {
        const struct tvmdev_kai_slot *s = &dev->slots[i];

        if (s->rhs == rhs && s->bias == bias && s->ukernel == uk && s->n == n && s->k == k &&
            s->transposed == transposed) {
            return dev->arena + s->offset;
        }
    }
    return NULL;
}

/* Keeps packed (size bytes, just above the other kept constants) until Destroy. */
static void keep_slot(tvm_device_kleidiai_t *dev, const void *rhs, const float *bias,
                      const void *uk, size_t n, size_t k, uint32_t transposed,
                      const uint8_t *packed, size_t size)
{
    struct tvmdev_kai_slot *s = &dev->slots[dev->n_slots++];

    s->rhs = rhs;
    s->bias = bias;
    s->ukernel = uk;
    s->n = (uint32_t)n;
    s->k = (uint32_t)k;
    s->transposed = transposed;
    s->offset = (size_t)(packed - dev->arena);
    s->size = size;
    dev->arena_used = s->offset + size;
    dev->stats.packs++;
}

/* B (N x K) transposed into K x N, for a family without nxk packing; NULL when the
 * arena is too small. */
static const float *transposed_copy(tvm_device_kleidiai_t *dev, size_t *cursor, const float *B,
                                    size_t N, size_t K)
{
    float *t = (float *)(void *)scratch_alloc(dev, cursor, N * K * sizeof(float));
    size_t n, k;

    if (t == NULL) {
        return NULL;
    }
    for (n = 0; n < N; n++) {
        for (k = 0; k < K; k++) {
            t[k * N + n] = B[n * K + k];
        }
    }
    return t;
}

/*
 * The packed B of this call. A constant is looked up among the packed slots, or packed
 * now just above them (and kept); any other B is packed into this call's scratch. The
 * zero bias the packing routines need when the bias is not fused, and the transposed
 * copy of B a family without nxk packing needs, come from scratch and are given back
 * once B is packed. *cursor is the start of the free scratch, moved past what this
 * keeps; NULL when the arena is too small.
 */
static const uint8_t *packed_rhs(tvm_device_kleidiai_t *dev, size_t *cursor,
                                 const struct tvmdev_kai_f32_ukernel *uk, const float *B,
                                 const float *bias, const struct tvmk_gemm_params *p)
{
    const size_t N = (size_t)p->N, K = (size_t)p->K;
    const int transposed = p->trans_b != 0;
    const int nxk = transposed && uk->rhs_pack_nxk != NULL;
    const size_t size = nxk ? uk->rhs_packed_size_nxk(N, K) : uk->rhs_packed_size_kxn(N, K);
    const void *use_bias = bias;
    const float *rhs = B;
    uint8_t *dst;

    *cursor = dev->arena_used;
    if (p->b_constant) {
        const uint8_t *kept = find_slot(dev, B, bias, uk, N, K, (uint32_t)transposed);

        if (kept != NULL) {
            return kept;
        }
        if (dev->n_slots == TVMDEV_KAI_MAX_PACKED) {
            return NULL;
        }
    }
    dst = scratch_alloc(dev, cursor, size); /* for a constant: right above the others */
    if (dst == NULL) {
        return NULL;
    }
    if (use_bias == NULL) {
        float *zeros = (float *)(void *)scratch_alloc(dev, cursor, N * sizeof(float));

        if (zeros == NULL) {
            return NULL;
        }
        memset(zeros, 0, N * sizeof(float));
        use_bias = zeros;
    }
    if (transposed && !nxk) {
        rhs = transposed_copy(dev, cursor, B, N, K);
        if (rhs == NULL) {
            return NULL;
        }
    }
    if (nxk) {
        uk->rhs_pack_nxk(1, N, K, uk->get_nr(), uk->get_kr(), uk->get_sr(), K * sizeof(float), B,
                         use_bias, NULL, dst, 0, NULL);
    } else {
        uk->rhs_pack_kxn(1, N, K, uk->get_nr(), uk->get_kr(), uk->get_sr(), N * sizeof(float),
                         rhs, use_bias, NULL, dst, 0, NULL);
    }
    *cursor = (size_t)(dst - dev->arena) + size; /* the zeros and the copy are done with */
    if (p->b_constant) {
        keep_slot(dev, B, bias, uk, N, K, (uint32_t)transposed, dst, size);
    }
    return dst;
}

/*
 * Y = clamp(alpha * A @ op(B) + beta * C) on the best f32 family, the preconditions
 * checked. A clamp narrower than the floats needs alpha = 1 and C fused as a bias.
 */
static int32_t run_f32(tvm_device_kleidiai_t *dev, const float *A, const float *B,
                       const float *C, float *Y, const struct tvmk_gemm_params *p,
                       float clamp_min, float clamp_max)
{
    const struct tvmdev_kai_f32_ukernel *uk = tvmdev_kai_select_f32(dev->features);
    const float *bias;
    struct job j;
    size_t cursor;

    if (uk == NULL) {
        return decline(dev);
    }
    memset(&j, 0, sizeof(j));
    bias = split_c(&j, C, p);
    if ((clamp_min > -FLT_MAX || clamp_max < FLT_MAX) && (j.C != NULL || p->alpha != 1.0f)) {
        return decline(dev); /* the clamp would come before the writeback */
    }
    j.rhs_packed = packed_rhs(dev, &cursor, uk, B, bias, p);
    if (j.rhs_packed == NULL) {
        return decline(dev); /* the arena is too small */
    }
    j.uk = uk;
    j.compute = compute_f32;
    j.A = A;
    j.Y = Y;
    j.p = p;
    j.clamp_min = clamp_min;
    j.clamp_max = clamp_max;
    j.m_step = uk->get_m_step();
    j.n_step = uk->get_n_step();
    if (uk->get_mr != NULL) {
        const size_t mr = uk->get_mr(), kr = uk->get_kr(), sr = uk->get_sr();
        const size_t M = (size_t)p->M, K = (size_t)p->K;
        uint8_t *lhs = scratch_alloc(dev, &cursor, uk->lhs_packed_size(M, K, mr, kr, sr));

        if (lhs == NULL) {
            return decline(dev);
        }
        uk->lhs_pack(M, K, mr, kr, sr, 0, A, K * sizeof(float), lhs);
        j.lhs_packed = lhs;
    }
    return run_job(dev, &j, &cursor, uk->name);
}

int32_t tvmdev_kai_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle)
{
    tvm_device_kleidiai_t *dev = (tvm_device_kleidiai_t *)resource_handle;
    const struct tvmk_gemm_params *p = params;

    if (dev == NULL || !dev->initialized || p == NULL || A == NULL || B == NULL || Y == NULL) {
        return decline(dev);
    }
    if (p->M <= 0 || p->N <= 0 || p->K <= 0 || p->trans_a != 0 ||
        (p->trans_b != 0 && !p->b_constant)) {
        return decline(dev);
    }
    return run_f32(dev, A, B, C, Y, p, -FLT_MAX, FLT_MAX);
}

int32_t tvmdev_kai_fully_connected_f32(const float *input, const float *weights,
                                       const float *bias, float *output,
                                       const struct tvmk_fully_connected_params *params,
                                       void *resource_handle)
{
    tvm_device_kleidiai_t *dev = (tvm_device_kleidiai_t *)resource_handle;
    const struct tvmk_fully_connected_params *p = params;
    float lo = -FLT_MAX, hi = FLT_MAX;
    struct tvmk_gemm_params g;

    if (dev == NULL || !dev->initialized || p == NULL || input == NULL || weights == NULL ||
        output == NULL || p->batch <= 0 || p->in_size <= 0 || p->out_size <= 0) {
        return decline(dev);
    }
    switch (p->activation) {
    case TVMK_ACT_NONE:
        break;
    case TVMK_ACT_RELU:
        lo = 0.0f;
        break;
    case TVMK_ACT_RELU6:
        lo = 0.0f;
        hi = 6.0f;
        break;
    case TVMK_ACT_RELU_N1_TO_1:
        lo = -1.0f;
        hi = 1.0f;
        break;
    default:
        return decline(dev); /* TANH (no clamp): the portable kernel applies it */
    }
    /* output (batch x out) = input (batch x in) @ weights (out x in)^T + bias */
    memset(&g, 0, sizeof(g));
    g.M = p->batch;
    g.N = p->out_size;
    g.K = p->in_size;
    g.trans_b = 1;
    g.alpha = 1.0f;
    g.beta = 1.0f;
    g.c_stride_n = 1; /* the bias, a row vector: fused into the packed weights */
    g.b_constant = p->weights_constant;
    return run_f32(dev, input, weights, bias, output, &g, lo, hi);
}

int32_t tvmdev_kai_gemm_q4c32_f32(const float *A, const struct tvmk_q4c32 *B, const float *C,
                                  float *Y, const struct tvmk_gemm_params *params,
                                  void *resource_handle)
{
    tvm_device_kleidiai_t *dev = (tvm_device_kleidiai_t *)resource_handle;
    const struct tvmdev_kai_q4_ukernel *uk;
    const struct tvmk_gemm_params *p = params;
    const float *bias;
    struct job j;
    size_t cursor, M, N, K, bl, mr, nr, kr, sr, size;
    uint8_t *dst, *lhs;

    if (dev == NULL || !dev->initialized || p == NULL || A == NULL || B == NULL || Y == NULL) {
        return decline(dev);
    }
    if (p->M <= 0 || p->N <= 0 || p->K <= 0 || p->trans_a != 0 || B->n != p->N ||
        B->k != p->K || B->block <= 0 || B->block % 32 != 0 || p->K % B->block != 0) {
        return decline(dev);
    }
    uk = tvmdev_kai_select_q4(dev->features);
    if (uk == NULL) {
        return decline(dev); /* neither i8mm nor dotprod */
    }
    M = (size_t)p->M;
    N = (size_t)p->N;
    K = (size_t)p->K;
    bl = (size_t)B->block;
    mr = uk->get_mr();
    nr = uk->get_nr();
    kr = uk->get_kr();
    sr = uk->get_sr();
    memset(&j, 0, sizeof(j));
    bias = split_c(&j, C, p);
    /* The packed weights: kept from an earlier call, or packed once above the others. */
    j.rhs_packed = find_slot(dev, B->data, bias, uk, N, K, 1U);
    cursor = dev->arena_used;
    if (j.rhs_packed == NULL) {
        if (dev->n_slots == TVMDEV_KAI_MAX_PACKED) {
            return decline(dev);
        }
        size = uk->rhs_packed_size(N, K, nr, kr, sr, bl);
        dst = scratch_alloc(dev, &cursor, size);
        if (dst == NULL) {
            return decline(dev);
        }
        uk->rhs_pack(N, K, nr, kr, sr, bl, B->data, K / 2U, bias, B->scales,
                     (K / bl) * sizeof(uint16_t), dst);
        keep_slot(dev, B->data, bias, uk, N, K, 1U, dst, size);
        j.rhs_packed = dst;
    }
    lhs = scratch_alloc(dev, &cursor, uk->lhs_packed_size(M, K, mr, kr, sr));
    if (lhs == NULL) {
        return decline(dev);
    }
    uk->lhs_pack(M, K, mr, kr, sr, 0, A, K * sizeof(float), lhs);
    j.lhs_packed = lhs;
    j.uk = uk;
    j.compute = compute_q4;
    j.bl = bl;
    j.A = A;
    j.Y = Y;
    j.p = p;
    j.clamp_min = -FLT_MAX;
    j.clamp_max = FLT_MAX;
    j.m_step = uk->get_m_step();
    j.n_step = uk->get_n_step();
    return run_job(dev, &j, &cursor, uk->name);
}

int32_t tvmdev_kai_matmul_f32(const float *A, const float *B, float *Y,
                              const struct tvmk_matmul_params *params, void *resource_handle)
{
    struct tvmk_gemm_params g;

    /* One product only; a batch (numpy batching, broadcast or not) is the portable
     * kernel's, which walks the batch strides. */
    if (params == NULL || params->batch != 1) {
        return decline((tvm_device_kleidiai_t *)resource_handle);
    }
    g.M = params->M;
    g.N = params->N;
    g.K = params->K;
    g.trans_a = 0;
    g.trans_b = 0;
    g.alpha = 1.0f;
    g.beta = 0.0f;
    g.c_stride_m = 0;
    g.c_stride_n = 0;
    g.b_constant = params->b_constant;
    g.scratch_bytes = params->scratch_bytes;
    g.scratch = params->scratch;
    return tvmdev_kai_gemm_f32(A, B, NULL, Y, &g, resource_handle);
}
