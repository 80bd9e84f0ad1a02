/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's integration of Arm KleidiAI: the micro-kernel tables, the device's
 * configuration and the thread-pool hook. Written for tvmdev; KleidiAI itself is used
 * from a KleidiAI source tree (KLEIDIAI_SOURCE_DIR), never copied.
 *
 * A table holds one micro-kernel family through KleidiAI's own interface: its getters
 * (m_step, n_step, mr, nr, kr, sr, packed offsets) and its run function, plus the
 * packing routines it pairs with. Built with TVMDEV_KAI_REAL the tables point at
 * KleidiAI; otherwise at tvmdev's reference micro-kernels (tvmdev_kai_reference.c),
 * which follow the same interface with naive bodies, so that the dispatch, tiling,
 * packing offsets, alpha/beta writeback and fallback of the integration are tested
 * wherever there is no KleidiAI tree.
 */
#ifndef TVMDEV_KAI_H_
#define TVMDEV_KAI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CPU features (from getauxval on Linux AArch64). */
#define TVMDEV_KAI_NEON (1U << 0)
#define TVMDEV_KAI_DOTPROD (1U << 1)
#define TVMDEV_KAI_I8MM (1U << 2)
#define TVMDEV_KAI_SME (1U << 3)
#define TVMDEV_KAI_SME2 (1U << 4)

/* Constants whose packed form the device keeps (one slot per constant and layout). */
#ifndef TVMDEV_KAI_MAX_PACKED
#define TVMDEV_KAI_MAX_PACKED 32
#endif
#ifndef TVMDEV_KAI_MAX_THREADS
#define TVMDEV_KAI_MAX_THREADS 8
#endif

/* One float32 micro-kernel family, in KleidiAI's interface. */
struct tvmdev_kai_f32_ukernel {
    const char *name;
    uint32_t features; /* needs all of these */
    size_t (*get_m_step)(void);
    size_t (*get_n_step)(void);
    size_t (*get_mr)(void); /* NULL: the LHS is not packed */
    size_t (*get_nr)(void);
    size_t (*get_kr)(void);
    size_t (*get_sr)(void);
    size_t (*get_lhs_packed_offset)(size_t m_idx, size_t k);
    size_t (*get_rhs_packed_offset)(size_t n_idx, size_t k);
    /* Exactly one of the two runs: with a packed or a plain LHS. */
    void (*run_packed_lhs)(size_t m, size_t n, size_t k, const void *lhs_packed,
                           const void *rhs_packed, void *dst, size_t dst_stride_row,
                           size_t dst_stride_col, float clamp_min, float clamp_max);
    void (*run_plain_lhs)(size_t m, size_t n, size_t k, const void *lhs, size_t lhs_stride,
                          const void *rhs_packed, void *dst, size_t dst_stride_row,
                          size_t dst_stride_col, float clamp_min, float clamp_max);
    size_t (*lhs_packed_size)(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
    void (*lhs_pack)(size_t m, size_t k, size_t mr, size_t kr, size_t sr, size_t m_idx_start,
                     const void *lhs, size_t lhs_stride_row, void *lhs_packed);
    size_t (*rhs_packed_size_kxn)(size_t n, size_t k);
    void (*rhs_pack_kxn)(size_t num_groups, size_t n, size_t k, size_t nr, size_t kr, size_t sr,
                         size_t rhs_stride, const void *rhs, const void *bias, const void *scale,
                         void *rhs_packed, size_t extra_bytes, const void *params);
    size_t (*rhs_packed_size_nxk)(size_t n, size_t k); /* NULL: no transposed packing */
    void (*rhs_pack_nxk)(size_t num_groups, size_t n, size_t k, size_t nr, size_t kr, size_t sr,
                         size_t rhs_stride, const void *rhs, const void *bias, const void *scale,
                         void *rhs_packed, size_t extra_bytes, const void *params);
};

/* One int4 family: activations quantised to int8 per row (qai8dxp) times 4-bit
 * block-quantised weights (qsi4c32p), in KleidiAI's interface; scales are bfloat16. */
struct tvmdev_kai_q4_ukernel {
    const char *name;
    uint32_t features;
    size_t (*get_m_step)(void);
    size_t (*get_n_step)(void);
    size_t (*get_mr)(void);
    size_t (*get_nr)(void);
    size_t (*get_kr)(void);
    size_t (*get_sr)(void);
    size_t (*get_lhs_packed_offset)(size_t m_idx, size_t k);
    size_t (*get_rhs_packed_offset)(size_t n_idx, size_t k, size_t bl);
    void (*run)(size_t m, size_t n, size_t k, size_t bl, const void *lhs_packed,
                const void *rhs_packed, float *dst, size_t dst_stride_row, size_t dst_stride_col,
                float clamp_min, float clamp_max);
    size_t (*lhs_packed_size)(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
    void (*lhs_pack)(size_t m, size_t k, size_t mr, size_t kr, size_t sr, size_t m_idx_start,
                     const float *lhs, size_t lhs_stride, void *lhs_packed);
    size_t (*rhs_packed_size)(size_t n, size_t k, size_t nr, size_t kr, size_t sr, size_t bl);
    /* rhs: n rows of k 4-bit values; scales: bfloat16, scale_stride bytes per row. */
    void (*rhs_pack)(size_t n, size_t k, size_t nr, size_t kr, size_t sr, size_t bl,
                     const uint8_t *rhs, size_t rhs_stride, const float *bias,
                     const uint16_t *scales, size_t scale_stride, void *rhs_packed);
};

/* The int4 families, best first: i8mm, then dotprod. */
extern const struct tvmdev_kai_q4_ukernel *const tvmdev_kai_q4_ukernels[];
extern const size_t tvmdev_kai_q4_ukernel_count;
const struct tvmdev_kai_q4_ukernel *tvmdev_kai_select_q4(uint32_t features);

/* The families, best first: SME2 mopa, SME mopa, NEON f32. */
extern const struct tvmdev_kai_f32_ukernel *const tvmdev_kai_f32_ukernels[];
extern const size_t tvmdev_kai_f32_ukernel_count;

/* The best family the features allow, or NULL. */
const struct tvmdev_kai_f32_ukernel *tvmdev_kai_select_f32(uint32_t features);

/* The thread-pool hook: run task(arg, i) for every i < count, in any order and on any
 * threads, and return when all are done. */
typedef void (*tvmdev_kai_task_fn)(void *arg, uint32_t index);
typedef void (*tvmdev_kai_parallel_fn)(void *ctx, uint32_t count, tvmdev_kai_task_fn task,
                                       void *arg);

/* Runs the tasks on count - 1 pthreads plus the caller (Linux). */
void tvmdev_kai_pthread_parallel(void *ctx, uint32_t count, tvmdev_kai_task_fn task, void *arg);

/* Init's configuration. NULL, or all zeros, means: the built-in static arena, one thread,
 * the features the CPU reports. */
struct tvmdev_kai_config {
    void *arena;             /* packed weights and per-call scratch; 16-byte aligned */
    size_t arena_size;
    uint32_t threads;        /* threads a gemm spreads its tiles over; 0 or 1: one */
    tvmdev_kai_parallel_fn parallel; /* NULL: tvmdev_kai_pthread_parallel */
    void *parallel_ctx;
    uint32_t feature_mask;   /* features to leave unused (tests, benchmarks); 0: none */
    uint32_t features;       /* with force_features: use these instead of the CPU's */
    uint32_t force_features;
};

/* A constant the device packed (at first use), keyed by the constant's address. */
struct tvmdev_kai_slot {
    const void *rhs;
    const void *bias;
    const void *ukernel; /* a tvmdev_kai_f32_ukernel or tvmdev_kai_q4_ukernel */
    uint32_t n, k, transposed;
    size_t offset; /* in the arena */
    size_t size;
};

/* Counters, for tests and reports. */
struct tvmdev_kai_stats {
    uint32_t calls;      /* gemm calls served */
    uint32_t declined;   /* calls declined to the next kernel */
    uint32_t packs;      /* constants packed */
    uint32_t tiles;      /* micro-kernel runs */
    const char *last_ukernel;
};

#ifdef __cplusplus
}
#endif

#endif /* TVMDEV_KAI_H_ */
