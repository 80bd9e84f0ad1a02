/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int32 ADD, MUL, DIV, MAXIMUM, MINIMUM with numpy
 * broadcasting (a strided walk over the output), then the fused activation's clamp
 * [act_min, act_max]. Sums and products wrap modulo 2^32; DIV truncates toward zero and
 * refuses a zero divisor and INT32_MIN / -1. Each output element is written after its
 * operands are read, so the output may alias an operand of its shape.
 */
#include "rawint.h"

#define TVMK_I32_ADD 0
#define TVMK_I32_MUL 1
#define TVMK_I32_DIV 2
#define TVMK_I32_MAX 3
#define TVMK_I32_MIN 4

static int tvmk_i32_op(int op, int32_t a, int32_t b, int32_t *out)
{
    switch (op) {
    case TVMK_I32_ADD:
        *out = tvmk_s32((uint32_t)a + (uint32_t)b);
        return 0;
    case TVMK_I32_MUL:
        *out = tvmk_s32((uint32_t)a * (uint32_t)b);
        return 0;
    case TVMK_I32_DIV:
        if (b == 0 || (a == INT32_MIN && b == -1)) {
            return -1;
        }
        *out = a / b;
        return 0;
    case TVMK_I32_MAX:
        *out = a > b ? a : b;
        return 0;
    default:
        *out = a < b ? a : b;
        return 0;
    }
}

static int32_t tvmk_i32_binary(int op, const int32_t *A, const int32_t *B, int32_t *C,
                               const struct tvmk_int_binary_params *p)
{
    int32_t idx[TVMK_MAX_DIMS];
    int32_t n, d, v;
    ptrdiff_t aoff = 0;
    ptrdiff_t boff = 0;

    if (A == NULL || B == NULL || C == NULL || p == NULL || p->ndim < 1
        || p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->act_min > p->act_max) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (d = 0; d < p->ndim; ++d) {
        idx[d] = 0;
    }
    for (n = 0; n < p->count; ++n) {
        if (tvmk_i32_op(op, A[aoff], B[boff], &v) != 0) {
            return TVM_DEVICE_ERR_INVALID;
        }
        C[n] = v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
        for (d = p->ndim - 1; d >= 0; --d) {
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

#define TVMK_I32_KERNEL(name, op)                                                      \
    int32_t name(const int32_t *A, const int32_t *B, int32_t *C,                        \
                 const struct tvmk_int_binary_params *params, void *resource_handle)    \
    {                                                                                   \
        (void)resource_handle;                                                          \
        return tvmk_i32_binary(op, A, B, C, params);                                    \
    }

TVMK_I32_KERNEL(tvmk_add_i32, TVMK_I32_ADD)
TVMK_I32_KERNEL(tvmk_mul_i32, TVMK_I32_MUL)
TVMK_I32_KERNEL(tvmk_div_i32, TVMK_I32_DIV)
TVMK_I32_KERNEL(tvmk_maximum_i32, TVMK_I32_MAX)
TVMK_I32_KERNEL(tvmk_minimum_i32, TVMK_I32_MIN)
