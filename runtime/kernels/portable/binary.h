/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the shared body of the broadcasting elementwise binary
 * kernels (add.c, sub.c, mul.c, div.c, maximum.c, minimum.c). Private to this folder; every function is static inline and
 * the operator is a compile-time constant at each call site.
 *
 * Output elements are produced in order and each is written once, after its operands
 * are read, so the output may alias an operand that has the output's shape.
 */
#ifndef TVMK_PORTABLE_BINARY_H_
#define TVMK_PORTABLE_BINARY_H_

#include <stddef.h>

#include "activation.h"

#define TVMK_BINARY_ADD 0
#define TVMK_BINARY_MUL 1
#define TVMK_BINARY_SUB 2
#define TVMK_BINARY_MAX 3
#define TVMK_BINARY_MIN 4
#define TVMK_BINARY_DIV 5

static inline float tvmk_binary_op(int op, float a, float b)
{
    switch (op) {
    case TVMK_BINARY_ADD:
        return a + b;
    case TVMK_BINARY_SUB:
        return a - b;
    case TVMK_BINARY_MAX:
        return a > b ? a : b;
    case TVMK_BINARY_MIN:
        return a < b ? a : b;
    case TVMK_BINARY_DIV:
        return a / b;
    default:
        return a * b;
    }
}

/* 1 when strides address the output's shape contiguously (dims of size 1 ignored). */
static inline int tvmk_binary_is_dense(const struct tvmk_binary_params *p,
                                       const int32_t *strides)
{
    int32_t d;
    int32_t expect = 1;

    for (d = p->ndim - 1; d >= 0; --d) {
        if (p->shape[d] != 1 && strides[d] != expect) {
            return 0;
        }
        expect *= p->shape[d];
    }
    return 1;
}

/* 1 when every stride of a dim larger than 1 is 0: the operand is one element. */
static inline int tvmk_binary_is_scalar(const struct tvmk_binary_params *p,
                                        const int32_t *strides)
{
    int32_t d;

    for (d = 0; d < p->ndim; ++d) {
        if (p->shape[d] != 1 && strides[d] != 0) {
            return 0;
        }
    }
    return 1;
}

static inline int32_t tvmk_binary_raw(int op, const float *A, const float *B, float *C,
                                      const struct tvmk_binary_params *p)
{
    int32_t idx[TVMK_MAX_DIMS];
    int32_t n, d, inner, sa, sb, outer, o, j;
    ptrdiff_t aoff = 0;
    ptrdiff_t boff = 0;
    int a_dense, b_dense;

    if (A == NULL || B == NULL || C == NULL || p == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->ndim < 0 || p->ndim > TVMK_MAX_DIMS || p->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    n = p->count;
    if (n == 0) {
        return TVM_DEVICE_OK;
    }
    a_dense = tvmk_binary_is_dense(p, p->a_strides);
    b_dense = tvmk_binary_is_dense(p, p->b_strides);
    if (a_dense && b_dense) {
        /* Same shape. */
        for (j = 0; j < n; ++j) {
            C[j] = tvmk_binary_op(op, A[j], B[j]);
        }
        return TVM_DEVICE_OK;
    }
    if (a_dense && tvmk_binary_is_scalar(p, p->b_strides)) {
        const float b = B[0];
        for (j = 0; j < n; ++j) {
            C[j] = tvmk_binary_op(op, A[j], b);
        }
        return TVM_DEVICE_OK;
    }
    if (b_dense && tvmk_binary_is_scalar(p, p->a_strides)) {
        const float a = A[0];
        for (j = 0; j < n; ++j) {
            C[j] = tvmk_binary_op(op, a, B[j]);
        }
        return TVM_DEVICE_OK;
    }

    /* General broadcast: an odometer over the outer dims, a strided loop inside. */
    if (p->ndim == 0) {
        C[0] = tvmk_binary_op(op, A[0], B[0]);
        return TVM_DEVICE_OK;
    }
    inner = p->shape[p->ndim - 1];
    if (inner <= 0) {
        return TVM_DEVICE_OK;
    }
    sa = p->a_strides[p->ndim - 1];
    sb = p->b_strides[p->ndim - 1];
    outer = n / inner;
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < outer; ++o) {
        const float *pa = A + aoff;
        const float *pb = B + boff;
        float *pc = C + (size_t)o * (size_t)inner;
        if (sa == 1 && sb == 1) {
            for (j = 0; j < inner; ++j) {
                pc[j] = tvmk_binary_op(op, pa[j], pb[j]);
            }
        } else if (sa == 1 && sb == 0) {
            const float b = pb[0];
            for (j = 0; j < inner; ++j) {
                pc[j] = tvmk_binary_op(op, pa[j], b);
            }
        } else if (sa == 0 && sb == 1) {
            const float a = pa[0];
            for (j = 0; j < inner; ++j) {
                pc[j] = tvmk_binary_op(op, a, pb[j]);
            }
        } else {
            for (j = 0; j < inner; ++j) {
                pc[j] = tvmk_binary_op(op, pa[(ptrdiff_t)j * sa], pb[(ptrdiff_t)j * sb]);
            }
        }
        for (d = p->ndim - 2; d >= 0; --d) {
            aoff += p->a_strides[d];
            boff += p->b_strides[d];
            if (++idx[d] < p->shape[d]) {
                break;
            }
            aoff -= (ptrdiff_t)p->a_strides[d] * p->shape[d];
            boff -= (ptrdiff_t)p->b_strides[d] * p->shape[d];
            idx[d] = 0;
        }
    }
    return TVM_DEVICE_OK;
}

/* C = act(A op B): the operation, then the fused activation over the output. */
static inline int32_t tvmk_binary_f32(int op, const float *A, const float *B, float *C,
                                      const struct tvmk_binary_params *p)
{
    int32_t status, j;

    if (p != NULL && !tvmk_act_valid(p->activation)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    status = tvmk_binary_raw(op, A, B, C, p);
    if (status == TVM_DEVICE_OK && p->activation != TVMK_ACT_NONE) {
        for (j = 0; j < p->count; ++j) {
            C[j] = tvmk_activate(p->activation, C[j]);
        }
    }
    return status;
}

#endif /* TVMK_PORTABLE_BINARY_H_ */
