/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: Pad (ONNX, constant mode) and PAD / PADV2 (TFLite), by rows
 * (pad_rows.h: a fill before, the input's row copied, a fill after). output must not
 * overlap data.
 */
#include <stddef.h>

#include "pad_rows.h"
#include "tvmk_portable.h"

int32_t tvmk_pad_f32(const float *data, float *output, const struct tvmk_pad_params *params,
                     void *resource_handle)
{
    const struct tvmk_pad_params *p = params;

    (void)resource_handle;
    if (data == NULL || output == NULL || p == NULL || p->count < 0 ||
        !tvmk_pad_rows_valid(p->ndim, p->out_shape, p->in_shape, p->begin)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (p->count > 0) {
        tvmk_pad_rows(data, output, sizeof(float), p->ndim, p->out_shape, p->in_shape,
                      p->begin, &p->value);
    }
    return TVM_DEVICE_OK;
}
