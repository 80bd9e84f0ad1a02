/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: a strided slice (tvmk_strided_slice_params): TFLite's
 * STRIDED_SLICE, SPLIT and SPLIT_V, ONNX's Slice. The elements are copied as they are
 * (int8 and int16 keep the input's values whatever the output's quantization says, as
 * TFLM; raw int16, int32 and uint32 are copied alike, tvmk_strided_slice_i16 serving
 * quantized and raw int16), by the walk of transpose.h from the first element's offset;
 * an innermost dim of input stride 1 is one copy. Another element type is one more entry point giving its size.
 * Not in place: output must not overlap input.
 */
#include <stddef.h>

#include "transpose.h"
#include "tvmk_rawint.h"
#include "tvmk_s8_ops.h"

static int32_t tvmk_strided_slice(const void *input, void *output, size_t elem,
                                  const struct tvmk_strided_slice_params *p)
{
    int32_t idx[TVMK_MAX_DIMS];

    if (input == NULL || output == NULL || p == NULL || p->ndim < 1 ||
        p->ndim > TVMK_MAX_DIMS || p->count < 0 || p->offset < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->count == 0 || p->shape[p->ndim - 1] <= 0) {
        return TVM_DEVICE_OK;
    }
    tvmk_strided_walk((const unsigned char *)input + (size_t)p->offset * elem,
                      (unsigned char *)output, elem, p->ndim, p->count, p->shape,
                      p->in_strides, idx);
    return TVM_DEVICE_OK;
}

int32_t tvmk_strided_slice_f32(const float *input, float *output,
                               const struct tvmk_strided_slice_params *params,
                               void *resource_handle)
{
    (void)resource_handle;
    return tvmk_strided_slice(input, output, sizeof(float), params);
}

int32_t tvmk_strided_slice_s8(const int8_t *input, int8_t *output,
                              const struct tvmk_strided_slice_params *params,
                              void *resource_handle)
{
    (void)resource_handle;
    return tvmk_strided_slice(input, output, 1, params);
}

#define TVMK_STRIDED_SLICE(name, type)                                                   \
    int32_t name(const type *input, type *output,                                        \
                 const struct tvmk_strided_slice_params *params, void *resource_handle)  \
    {                                                                                    \
        (void)resource_handle;                                                           \
        return tvmk_strided_slice(input, output, sizeof(type), params);                  \
    }

TVMK_STRIDED_SLICE(tvmk_strided_slice_i16, int16_t)
TVMK_STRIDED_SLICE(tvmk_strided_slice_i32, int32_t)
TVMK_STRIDED_SLICE(tvmk_strided_slice_u32, uint32_t)
