/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the shared body of the int8 and int16 broadcasting binary
 * kernels (add_s8.c, sub_s8.c, mul_s8.c, minmax_s8.c, binary_s16.c). Private to this
 * folder. The arithmetic is TFLM's for both types (int16's ADD and SUB differ only in
 * their params' left_shift), computed on int32 values; each kernel is one macro
 * instantiated per type. The element function is chosen by a compile-time constant at
 * each call site; output elements are produced in order, each after its operands are
 * read, so the output may alias an operand of the output's shape.
 */
#ifndef TVMK_PORTABLE_BINARY_INT_H_
#define TVMK_PORTABLE_BINARY_INT_H_

#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s8_ops.h"

#define TVMK_BINARY_INT_ADD 0
#define TVMK_BINARY_INT_MUL 1
#define TVMK_BINARY_INT_SUB 2
#define TVMK_BINARY_INT_MAX 3
#define TVMK_BINARY_INT_MIN 4

/* The broadcast geometry, the element arithmetic's constants of either op and the
 * output's range (ADD, SUB, MUL: the params' activation range). */
struct tvmk_binary_int {
    int32_t ndim, count;
    const int32_t *shape;
    const int32_t *a_strides;
    const int32_t *b_strides;
    int op;
    const struct tvmk_add_s8_params *add;
    const struct tvmk_mul_s8_params *mul;
    int32_t act_min, act_max;
};

/* ADD, or SUB when sub is 1 (the scaled B subtracted, as TFLM's SubElementwise), before
 * the activation's clamp. */
static inline int32_t tvmk_add_int_one(int32_t a, int32_t b,
                                       const struct tvmk_add_s8_params *p, int sub)
{
    const int32_t va = (int32_t)((uint32_t)(a + p->a_offset) << p->left_shift);
    const int32_t vb = (int32_t)((uint32_t)(b + p->b_offset) << p->left_shift);
    const int32_t sa = tvmk_multiply_by_quantized_multiplier(va, p->a_multiplier, p->a_shift);
    const int32_t sb = tvmk_multiply_by_quantized_multiplier(vb, p->b_multiplier, p->b_shift);
    return tvmk_multiply_by_quantized_multiplier(sub ? sa - sb : sa + sb, p->out_multiplier,
                                                 p->out_shift) + p->out_offset;
}

/* MUL, before the activation's clamp. */
static inline int32_t tvmk_mul_int_one(int32_t a, int32_t b,
                                       const struct tvmk_mul_s8_params *p)
{
    const int32_t prod = (a + p->a_offset) * (b + p->b_offset);
    return tvmk_multiply_by_quantized_multiplier(prod, p->out_multiplier, p->out_shift) +
           p->out_offset;
}

static inline int32_t tvmk_binary_int_one(const struct tvmk_binary_int *g, int32_t a,
                                          int32_t b)
{
    int32_t out;

    if (g->op == TVMK_BINARY_INT_MAX) { /* raw values: TFLM requires one quantization */
        return a > b ? a : b;
    }
    if (g->op == TVMK_BINARY_INT_MIN) {
        return a < b ? a : b;
    }
    if (g->op == TVMK_BINARY_INT_MUL) {
        out = tvmk_mul_int_one(a, b, g->mul);
    } else {
        out = tvmk_add_int_one(a, b, g->add, g->op == TVMK_BINARY_INT_SUB);
    }
    out = out < g->act_min ? g->act_min : out;
    return out > g->act_max ? g->act_max : out;
}

/* g's geometry from a params struct's leading fields (every binary params struct has
 * them), its op and its output range. */
#define TVMK_BINARY_INT_INIT(g, p, op_, add_, mul_, lo, hi)                                  \
    do {                                                                                     \
        (g).ndim = (p)->ndim;                                                                \
        (g).count = (p)->count;                                                              \
        (g).shape = (p)->shape;                                                              \
        (g).a_strides = (p)->a_strides;                                                      \
        (g).b_strides = (p)->b_strides;                                                      \
        (g).op = (op_);                                                                      \
        (g).add = (add_);                                                                    \
        (g).mul = (mul_);                                                                    \
        (g).act_min = (lo);                                                                  \
        (g).act_max = (hi);                                                                  \
    } while (0)

/* tvmk_binary_<sfx>_run: the broadcasting walk over elements of type T; each file
 * instantiates it once, before its kernels. */
#define TVMK_BINARY_INT_RUN(sfx, T)                                                          \
    static int32_t tvmk_binary_##sfx##_run(const struct tvmk_binary_int *g, const T *A,      \
                                           const T *B, T *C)                                 \
    {                                                                                        \
        int32_t idx[TVMK_MAX_DIMS];                                                          \
        int32_t d, o, j, inner, outer, sa, sb;                                               \
        ptrdiff_t aoff = 0;                                                                  \
        ptrdiff_t boff = 0;                                                                  \
                                                                                             \
        if (g->ndim < 1 || g->ndim > TVMK_MAX_DIMS || g->count < 0 ||                        \
            g->act_min > g->act_max) {                                                       \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        inner = g->shape[g->ndim - 1];                                                       \
        if (g->count == 0 || inner <= 0) {                                                   \
            return TVM_DEVICE_OK;                                                            \
        }                                                                                    \
        sa = g->a_strides[g->ndim - 1];                                                      \
        sb = g->b_strides[g->ndim - 1];                                                      \
        outer = g->count / inner;                                                            \
        for (d = 0; d < g->ndim; ++d) {                                                      \
            idx[d] = 0;                                                                      \
        }                                                                                    \
        for (o = 0; o < outer; ++o) {                                                        \
            T *pc = C + (size_t)o * (size_t)inner;                                           \
            for (j = 0; j < inner; ++j) {                                                    \
                pc[j] = (T)tvmk_binary_int_one(g, A[aoff + (ptrdiff_t)j * sa],               \
                                               B[boff + (ptrdiff_t)j * sb]);                 \
            }                                                                                \
            for (d = g->ndim - 2; d >= 0; --d) {                                             \
                aoff += g->a_strides[d];                                                     \
                boff += g->b_strides[d];                                                     \
                if (++idx[d] < g->shape[d]) {                                                \
                    break;                                                                   \
                }                                                                            \
                aoff -= (ptrdiff_t)g->a_strides[d] * g->shape[d];                            \
                boff -= (ptrdiff_t)g->b_strides[d] * g->shape[d];                            \
                idx[d] = 0;                                                                  \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* A binary kernel of T taking params_t: NULL pointers and (bad) refused, then the walk of
 * op with ADD's (add_) or MUL's (mul_) constants, the output clamped to [lo, hi]. */
#define TVMK_BINARY_INT_KERNEL(name, sfx, T, params_t, bad, op, add_, mul_, lo, hi)          \
    int32_t name(const T *A, const T *B, T *C, const params_t *params, void *resource_handle) \
    {                                                                                        \
        struct tvmk_binary_int g;                                                            \
                                                                                             \
        (void)resource_handle;                                                               \
        if (A == NULL || B == NULL || C == NULL || params == NULL || (bad)) {                \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        TVMK_BINARY_INT_INIT(g, params, op, add_, mul_, lo, hi);                             \
        return tvmk_binary_##sfx##_run(&g, A, B, C);                                         \
    }

/* ADD (op TVMK_BINARY_INT_ADD) or SUB (TVMK_BINARY_INT_SUB) of T, tvmk_add_s8_params. */
#define TVMK_ADD_INT(name, sfx, T, op)                                                       \
    TVMK_BINARY_INT_KERNEL(name, sfx, T, struct tvmk_add_s8_params,                          \
                           params->left_shift < 0 || params->left_shift > 30, op, params,    \
                           NULL, params->act_min, params->act_max)

/* MUL of T, tvmk_mul_s8_params. */
#define TVMK_MUL_INT(name, sfx, T)                                                           \
    TVMK_BINARY_INT_KERNEL(name, sfx, T, struct tvmk_mul_s8_params, 0, TVMK_BINARY_INT_MUL,  \
                           NULL, params, params->act_min, params->act_max)

/* MAXIMUM (op TVMK_BINARY_INT_MAX) or MINIMUM (TVMK_BINARY_INT_MIN) of the raw values of
 * T, whose range is [lo, hi] (tvmk_binary_params). */
#define TVMK_MINMAX_INT(name, sfx, T, op, lo, hi)                                            \
    TVMK_BINARY_INT_KERNEL(name, sfx, T, struct tvmk_binary_params, 0, op, NULL, NULL, lo, hi)

#endif /* TVMK_PORTABLE_BINARY_INT_H_ */
