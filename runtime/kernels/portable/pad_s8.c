/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 PAD / PADV2 (tvmk_s8_ops.h: tvmk_pad_s8_params), by rows
 * (pad_rows.h: memset before, the input's row copied, memset after). output must not
 * overlap data.
 */
#include <stddef.h>

#include "pad_rows.h"
#include "tvmk_s8_ops.h"

int32_t tvmk_pad_s8(const int8_t *data, int8_t *output, const struct tvmk_pad_s8_params *params,
                    void *resource_handle)
{
    const struct tvmk_pad_s8_params *p = params;
    int8_t value;

    (void)resource_handle;
    if (data == NULL || output == NULL || p == NULL || p->count < 0 || p->value < -128 ||
        p->value > 127 || !tvmk_pad_rows_valid(p->ndim, p->out_shape, p->in_shape, p->begin)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    value = (int8_t)p->value;
    if (p->count > 0) {
        tvmk_pad_rows(data, output, 1, p->ndim, p->out_shape, p->in_shape, p->begin, &value);
    }
    return TVM_DEVICE_OK;
}
