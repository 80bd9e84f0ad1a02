/*
 * gemm and matmul on KleidiAI micro-kernels, following ONNX Runtime's MLAS integration:
 *
 * - Preconditions: M, N, K > 0; transA not set; transB only when B is a constant (packed
 *   once, transposed, by the family's nxk packing routine). Anything else is declined and
 *   the next kernel of the chain (the portable one) serves the call.
 * - A constant B is packed at its first use, with its bias when the bias can be fused,
 *   into the device's arena and kept; a B that changes is packed on every call. The LHS
 *   is packed where the family needs it.
 * - The output is cut into m_step x n_step tiles spread over the device's threads
 *   through the thread-pool hook; each tile is computed into a per-thread scratch and
 *   written back: a memcpy when alpha = 1 and no C term is left, else
 *   Y = alpha * tile + beta * C.
 */
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "tvm/device/kleidiai/kleidiai.h"
#include "tvmdev_kai_kernels.h"
#include "tvmk_portable.h"

#define ALIGN 64U

struct job {
    const struct tvmdev_kai_f32_ukernel *uk;
    const float *A;
    const uint8_t *lhs_packed; /* NULL: plain LHS */
    const uint8_t *rhs_packed;
    float *Y;
    const float *C;            /* the C term left for the writeback, or NULL */
    const struct tvmk_gemm_params *p;
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

static void run_tiles(void *arg, uint32_t thread)
{
    const struct job *j = (const struct job *)arg;
    const struct tvmdev_kai_f32_ukernel *uk = j->uk;
    const size_t K = (size_t)j->p->K;
    float *tile = j->scratch + (size_t)thread * j->m_step * j->n_step;
    size_t t;

    for (t = thread; t < j->m_tiles * j->n_tiles; t += j->threads) {
        const size_t m0 = (t / j->n_tiles) * j->m_step;
        const size_t n0 = (t % j->n_tiles) * j->n_step;
        const size_t mb = (size_t)j->p->M - m0 < j->m_step ? (size_t)j->p->M - m0 : j->m_step;
        const size_t nb = (size_t)j->p->N - n0 < j->n_step ? (size_t)j->p->N - n0 : j->n_step;
        const void *rhs = j->rhs_packed + uk->get_rhs_packed_offset(n0, K);

        if (j->lhs_packed != NULL) {
            uk->run_packed_lhs(mb, nb, K, j->lhs_packed + uk->get_lhs_packed_offset(m0, K), rhs,
                               tile, nb * sizeof(float), sizeof(float), -FLT_MAX, FLT_MAX);
        } else {
            uk->run_plain_lhs(mb, nb, K, j->A + m0 * K, K * sizeof(float), rhs, tile,
                              nb * sizeof(float), sizeof(float), -FLT_MAX, FLT_MAX);
        }
        write_back(j, tile, m0, n0, mb, nb);
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

/*
 * The packed B of this call. A constant is looked up among the packed slots, or packed
 * now just above them (and kept); any other B is packed into this call's scratch. The
 * zero bias the packing routines need when the bias is not fused comes from scratch.
 * *cursor is the start of the free scratch, moved past what this takes; NULL when the
 * arena is too small.
 */
static const uint8_t *packed_rhs(tvm_device_kleidiai_t *dev, size_t *cursor,
                                 const struct tvmdev_kai_f32_ukernel *uk, const float *B,
                                 const float *bias, const struct tvmk_gemm_params *p)
{
    const size_t N = (size_t)p->N, K = (size_t)p->K;
    const int transposed = p->trans_b != 0;
    const size_t size = transposed ? uk->rhs_packed_size_nxk(N, K) : uk->rhs_packed_size_kxn(N, K);
    const void *use_bias = bias;
    uint8_t *dst;
    uint32_t i;

    *cursor = dev->arena_used;
    if (p->b_constant) {
        for (i = 0; i < dev->n_slots; i++) {
            const struct tvmdev_kai_slot *s = &dev->slots[i];

            if (s->rhs == B && s->bias == bias && s->ukernel == uk && s->n == N && s->k == K &&
                s->transposed == (uint32_t)transposed) {
                return dev->arena + s->offset;
            }
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
    if (transposed) {
        uk->rhs_pack_nxk(1, N, K, uk->get_nr(), uk->get_kr(), uk->get_sr(), K * sizeof(float), B,
                         use_bias, NULL, dst, 0, NULL);
    } else {
        uk->rhs_pack_kxn(1, N, K, uk->get_nr(), uk->get_kr(), uk->get_sr(), N * sizeof(float), B,
                         use_bias, NULL, dst, 0, NULL);
    }
    if (p->b_constant) {
        struct tvmdev_kai_slot *s = &dev->slots[dev->n_slots++];

        s->rhs = B;
        s->bias = bias;
        s->ukernel = uk;
        s->n = (uint32_t)N;
        s->k = (uint32_t)K;
        s->transposed = (uint32_t)transposed;
        s->offset = (size_t)(dst - dev->arena);
        s->size = size;
        dev->arena_used = s->offset + size;
        dev->stats.packs++;
    }
    return dst;
}

static int32_t decline(tvm_device_kleidiai_t *dev)
{
    if (dev != NULL) {
        dev->stats.declined++;
    }
    return TVM_DEVICE_DECLINED;
}

int32_t tvmdev_kai_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle)
{
    tvm_device_kleidiai_t *dev = (tvm_device_kleidiai_t *)resource_handle;
    const struct tvmdev_kai_f32_ukernel *uk;
    const struct tvmk_gemm_params *p = params;
    const float *bias = NULL;
    struct job j;
    size_t cursor, M, N, K;

    if (dev == NULL || !dev->initialized || p == NULL || A == NULL || B == NULL || Y == NULL) {
        return decline(dev);
    }
    if (p->M <= 0 || p->N <= 0 || p->K <= 0 || p->trans_a != 0 ||
        (p->trans_b != 0 && !p->b_constant)) {
        return decline(dev);
    }
    uk = tvmdev_kai_select_f32(dev->features);
    if (uk == NULL || (p->trans_b != 0 && uk->rhs_pack_nxk == NULL)) {
        return decline(dev);
    }
    M = (size_t)p->M;
    N = (size_t)p->N;
    K = (size_t)p->K;
    memset(&j, 0, sizeof(j));
    j.C = (C != NULL && p->beta != 0.0f) ? C : NULL;
    if (j.C != NULL && p->alpha == 1.0f && p->beta == 1.0f && p->c_stride_m == 0 &&
        p->c_stride_n == 1) {
        bias = C; /* a row vector: packed with B as its bias */
        j.C = NULL;
    }
    j.rhs_packed = packed_rhs(dev, &cursor, uk, B, bias, p);
    if (j.rhs_packed == NULL) {
        return decline(dev); /* the arena is too small */
    }
    j.uk = uk;
    j.A = A;
    j.Y = Y;
    j.p = p;
    j.m_step = uk->get_m_step();
    j.n_step = uk->get_n_step();
    j.m_tiles = (M + j.m_step - 1U) / j.m_step;
    j.n_tiles = (N + j.n_step - 1U) / j.n_step;
    j.threads = dev->threads;
    if (uk->get_mr != NULL) {
        const size_t mr = uk->get_mr(), kr = uk->get_kr(), sr = uk->get_sr();
        uint8_t *lhs = scratch_alloc(dev, &cursor, uk->lhs_packed_size(M, K, mr, kr, sr));

        if (lhs == NULL) {
            return decline(dev);
        }
        uk->lhs_pack(M, K, mr, kr, sr, 0, A, K * sizeof(float), lhs);
        j.lhs_packed = lhs;
    }
    j.scratch = (float *)(void *)scratch_alloc(dev, &cursor,
                                               (size_t)j.threads * j.m_step * j.n_step *
                                                   sizeof(float));
    if (j.scratch == NULL) {
        return decline(dev);
    }
    if (j.threads > 1U) {
        dev->parallel(dev->parallel_ctx, j.threads, run_tiles, &j);
    } else {
        run_tiles(&j, 0);
    }
    dev->stats.calls++;
    dev->stats.tiles += (uint32_t)(j.m_tiles * j.n_tiles);
    dev->stats.last_ukernel = uk->name;
    return TVM_DEVICE_OK;
}

int32_t tvmdev_kai_matmul_f32(const float *A, const float *B, float *Y,
                              const struct tvmk_matmul_params *params, void *resource_handle)
{
    struct tvmk_gemm_params g;

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
    return tvmdev_kai_gemm_f32(A, B, NULL, Y, &g, resource_handle);
}
