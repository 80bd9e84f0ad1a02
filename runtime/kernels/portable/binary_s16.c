/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels, int16: ADD, SUB and MUL with numpy broadcasting and a fused
 * activation, TFLM's int16 arithmetic (the int8 forms' params: tvmk_add_s8_params with
 * left_shift 15, tvmk_mul_s8_params); MAXIMUM and MINIMUM of raw values
 * (tvmk_binary_params). Output elements are produced in order, each after
 * its operands are read, so the output may alias an operand of the output's shape.
 */
#include <stddef.h>

#include "tvmk_fixedpoint.h"
#include "tvmk_s16.h"

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_MAX 3
#define OP_MIN 4

/* The broadcast geometry (shared by both params structs' leading fields) and the op. */
struct walk {
    int32_t ndim, count;
    const int32_t *shape;
    const int32_t *a_strides;
    const int32_t *b_strides;
    int op;
    const struct tvmk_add_s8_params *add;
    const struct tvmk_mul_s8_params *mul;
    int32_t act_min, act_max;
};

static int16_t one(const struct walk *g, int16_t a, int16_t b)
{
    int32_t out;
    if (g->op == OP_MAX) { /* raw values: one quantization throughout */
        return a > b ? a : b;
    }
    if (g->op == OP_MIN) {
        return a < b ? a : b;
    }
    if (g->op == OP_MUL) {
        const struct tvmk_mul_s8_params *p = g->mul;
        const int32_t prod = ((int32_t)a + p->a_offset) * ((int32_t)b + p->b_offset);
        out = tvmk_multiply_by_quantized_multiplier(prod, p->out_multiplier, p->out_shift) +
              p->out_offset;
    } else {
        const struct tvmk_add_s8_params *p = g->add;
        const int32_t va = (int32_t)((uint32_t)((int32_t)a + p->a_offset) << p->left_shift);
        const int32_t vb = (int32_t)((uint32_t)((int32_t)b + p->b_offset) << p->left_shift);
        const int32_t sa = tvmk_multiply_by_quantized_multiplier(va, p->a_multiplier,
                                                                 p->a_shift);
        const int32_t sb = tvmk_multiply_by_quantized_multiplier(vb, p->b_multiplier,
                                                                 p->b_shift);
        out = tvmk_multiply_by_quantized_multiplier(g->op == OP_SUB ? sa - sb : sa + sb,
                                                    p->out_multiplier, p->out_shift) +
              p->out_offset;
    }
    out = out < g->act_min ? g->act_min : out;
    return (int16_t)(out > g->act_max ? g->act_max : out);
}

static int32_t run(const struct walk *g, const int16_t *A, const int16_t *B, int16_t *C)
{
    int32_t idx[TVMK_MAX_DIMS];
    int32_t d, o, j, inner, outer, sa, sb;
    ptrdiff_t aoff = 0;
    ptrdiff_t boff = 0;

    if (A == NULL || B == NULL || C == NULL || g->ndim < 1 || g->ndim > TVMK_MAX_DIMS ||
        g->count < 0 || g->act_min > g->act_max) {
        return TVM_DEVICE_ERR_INVALID;
    }
    inner = g->shape[g->ndim - 1];
    if (g->count == 0 || inner <= 0) {
        return TVM_DEVICE_OK;
    }
    sa = g->a_strides[g->ndim - 1];
    sb = g->b_strides[g->ndim - 1];
    outer = g->count / inner;
    for (d = 0; d < g->ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        int16_t *pc = C + (size_t)o * (size_t)inner;
        for (j = 0; j < inner; ++j) {
            pc[j] = one(g, A[aoff + (ptrdiff_t)j * sa], B[boff + (ptrdiff_t)j * sb]);
        }
        for (d = g->ndim - 2; d >= 0; --d) {
            aoff += g->a_strides[d];
            boff += g->b_strides[d];
            if (++idx[d] < g->shape[d]) {
                break;
            }
            aoff -= (ptrdiff_t)g->a_strides[d] * g->shape[d];
            boff -= (ptrdiff_t)g->b_strides[d] * g->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}

static int32_t add_or_sub(const int16_t *A, const int16_t *B, int16_t *C,
                          const struct tvmk_add_s8_params *p, int op)
{
    struct walk g;

    if (p == NULL || p->left_shift < 0 || p->left_shift > 30) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.ndim = p->ndim;
    g.count = p->count;
    g.shape = p->shape;
    g.a_strides = p->a_strides;
    g.b_strides = p->b_strides;
    g.op = op;
    g.add = p;
    g.mul = NULL;
    g.act_min = p->act_min;
    g.act_max = p->act_max;
    return run(&g, A, B, C);
}

int32_t tvmk_add_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_add_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return add_or_sub(A, B, C, params, OP_ADD);
}

int32_t tvmk_sub_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_add_s8_params *params, void *resource_handle)
{
    (void)resource_handle;
    return add_or_sub(A, B, C, params, OP_SUB);
}

int32_t tvmk_mul_s16(const int16_t *A, const int16_t *B, int16_t *C,
                     const struct tvmk_mul_s8_params *params, void *resource_handle)
{
    struct walk g;

    (void)resource_handle;
    if (params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.ndim = params->ndim;
    g.count = params->count;
    g.shape = params->shape;
    g.a_strides = params->a_strides;
    g.b_strides = params->b_strides;
    g.op = OP_MUL;
    g.add = NULL;
    g.mul = params;
    g.act_min = params->act_min;
    g.act_max = params->act_max;
    return run(&g, A, B, C);
}

static int32_t compare(const int16_t *A, const int16_t *B, int16_t *C,
                       const struct tvmk_binary_params *p, int op)
{
    struct walk g;

    if (p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    g.ndim = p->ndim;
    g.count = p->count;
    g.shape = p->shape;
    g.a_strides = p->a_strides;
    g.b_strides = p->b_strides;
    g.op = op;
    g.add = NULL;
    g.mul = NULL;
    g.act_min = -32768;
    g.act_max = 32767;
    return run(&g, A, B, C);
}

int32_t tvmk_maximum_s16(const int16_t *A, const int16_t *B, int16_t *C,
                         const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return compare(A, B, C, params, OP_MAX);
}

int32_t tvmk_minimum_s16(const int16_t *A, const int16_t *B, int16_t *C,
                         const struct tvmk_binary_params *params, void *resource_handle)
{
    (void)resource_handle;
    return compare(A, B, C, params, OP_MIN);
}
