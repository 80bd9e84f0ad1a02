/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: CAST on raw integers (TFLM's static_cast): modulo 2^bits
 * into a narrower or signed type, the exact value into a wider one, the value rounded
 * to float32 into float.
 */
#include "rawint.h"

#define TVMK_CAST(name, from_t, to_t, expr)                                              \
    int32_t name(const from_t *input, to_t *output, const struct tvmk_unary_params *params, \
                 void *resource_handle)                                                  \
    {                                                                                    \
        int32_t i;                                                                       \
                                                                                         \
        (void)resource_handle;                                                           \
        if (input == NULL || output == NULL || params == NULL || params->count < 0) {    \
            return TVM_DEVICE_ERR_INVALID;                                               \
        }                                                                                \
        for (i = 0; i < params->count; ++i) {                                            \
            const from_t v = input[i];                                                   \
            output[i] = (expr);                                                          \
        }                                                                                \
        return TVM_DEVICE_OK;                                                            \
    }

TVMK_CAST(tvmk_cast_i16_i32, int16_t, int32_t, (int32_t)v)
TVMK_CAST(tvmk_cast_i16_f32, int16_t, float, (float)v)
TVMK_CAST(tvmk_cast_u32_i32, uint32_t, int32_t, tvmk_s32(v))
TVMK_CAST(tvmk_cast_i32_u32, int32_t, uint32_t, (uint32_t)v)
TVMK_CAST(tvmk_cast_i32_i8, int32_t, int8_t, tvmk_s8_wrap(v))
TVMK_CAST(tvmk_cast_i32_i16, int32_t, int16_t, tvmk_s16(v))
TVMK_CAST(tvmk_cast_i32_f32, int32_t, float, (float)v)
