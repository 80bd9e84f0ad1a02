/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the bodies of the int8 and int16 kernels that move values
 * without arithmetic, PAD / PADV2, CONCATENATION and RESHAPE (pad_s8.c, concat_s8.c,
 * quantize_s8.c; simple_s16.c and quantize_s16.c instantiate them for int16). Private to
 * this folder; each macro defines one kernel of element type T.
 */
#ifndef TVMK_PORTABLE_MOVES_INT_H_
#define TVMK_PORTABLE_MOVES_INT_H_

#include <stddef.h>
#include <string.h>

#include "pad_rows.h"
#include "tvmk_s8_ops.h"

/* PAD of T (tvmk_pad_s8_params; value in [lo, hi]): the output in row-major order, each
 * element the input's at (index - begin) when inside it, else value, written by rows
 * (pad_rows.h: a fill before, the input's row copied, a fill after). output must not
 * overlap data. */
#define TVMK_PAD_INT(name, T, lo, hi)                                                        \
    int32_t name(const T *data, T *output, const struct tvmk_pad_s8_params *params,          \
                 void *resource_handle)                                                      \
    {                                                                                        \
        const struct tvmk_pad_s8_params *p = params;                                         \
        T value;                                                                             \
                                                                                             \
        (void)resource_handle;                                                               \
        if (data == NULL || output == NULL || p == NULL || p->count < 0 ||                   \
            p->value < (lo) || p->value > (hi) ||                                            \
            !tvmk_pad_rows_valid(p->ndim, p->out_shape, p->in_shape, p->begin)) {            \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        value = (T)p->value;                                                                 \
        if (p->count > 0) {                                                                  \
            tvmk_pad_rows(data, output, sizeof(T), p->ndim, p->out_shape, p->in_shape,       \
                          p->begin, &value);                                                 \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* CONCATENATION of T (tvmk_concat_s8_params), a copy: for each outer index, each input's
 * block follows the previous one's. concat_result must not overlap an input. */
#define TVMK_CONCAT_INT(name, T)                                                             \
    int32_t name(const T *const *inputs, T *concat_result,                                   \
                 const struct tvmk_concat_s8_params *params, void *resource_handle)          \
    {                                                                                        \
        const struct tvmk_concat_s8_params *p = params;                                      \
        T *y = concat_result;                                                                \
        int32_t i, o, j;                                                                     \
                                                                                             \
        (void)resource_handle;                                                               \
        if (inputs == NULL || concat_result == NULL || p == NULL || p->ninputs < 1 ||        \
            p->ninputs > TVMK_CONCAT_MAX_INPUTS || p->outer < 0) {                           \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        for (i = 0; i < p->ninputs; ++i) {                                                   \
            if (inputs[i] == NULL || p->blocks[i] < 0) {                                     \
                return TVM_DEVICE_ERR_INVALID;                                               \
            }                                                                                \
        }                                                                                    \
        for (o = 0; o < p->outer; ++o) {                                                     \
            for (i = 0; i < p->ninputs; ++i) {                                               \
                const T *x = inputs[i] + (size_t)o * (size_t)p->blocks[i];                   \
                for (j = 0; j < p->blocks[i]; ++j) {                                         \
                    *y++ = x[j];                                                             \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

/* RESHAPE of T (tvmk_unary_params): a copy, skipped in place. */
#define TVMK_RESHAPE_INT(name, T)                                                            \
    int32_t name(const T *data, T *reshaped, const struct tvmk_unary_params *params,         \
                 void *resource_handle)                                                      \
    {                                                                                        \
        (void)resource_handle;                                                               \
        if (data == NULL || reshaped == NULL || params == NULL || params->count < 0) {       \
            return TVM_DEVICE_ERR_INVALID;                                                   \
        }                                                                                    \
        if (reshaped != data && params->count > 0) {                                         \
            memmove(reshaped, data, (size_t)params->count * sizeof(T));                      \
        }                                                                                    \
        return TVM_DEVICE_OK;                                                                \
    }

#endif /* TVMK_PORTABLE_MOVES_INT_H_ */
