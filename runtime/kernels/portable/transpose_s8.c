/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 TRANSPOSE (tvmk_transpose_params, tvmk_portable.h), a copy
 * of the bytes as TFLM's transpose makes it (the output keeps the input's values whatever
 * the two tensors' quantization says): the walk of transpose.h over 1-byte elements. Not
 * in place: transposed must not overlap data.
 */
#include "transpose.h"
#include "tvmk_s8_ops.h"

int32_t tvmk_transpose_s8(const int8_t *data, int8_t *transposed,
                          const struct tvmk_transpose_params *params, void *resource_handle)
{
    (void)resource_handle;
    return tvmk_transpose_int((const unsigned char *)data, (unsigned char *)transposed, 1,
                              params);
}
