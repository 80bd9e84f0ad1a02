/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmsis_nn: SVDF int8 with int16 time weights and state through arm_svdf_state_s16_s8,
 * as TFLM's kernels/cmsis_nn/svdf.cc calls it. CMSIS-NN reads no state zero point, so
 * generation sends a state quantized with one other than 0 to the portable kernel
 * (tvmdev/plan/hooks/cmsis_nn.py). The planned scratch (tvmk_svdf_s8_params) holds
 * CMSIS-NN's two buffers: batch x filters, then batch x units, int32.
 */
#include "tvmk_cmsis_nn_glue.h"
#include "tvmk_cmsis_nn_recurrent.h"

int32_t tvmk_cmsis_nn_svdf_s8_s16(const int8_t *input, const int8_t *weights_feature,
                                  const int16_t *weights_time, const int32_t *bias,
                                  int16_t *state, int8_t *output,
                                  const struct tvmk_svdf_s8_params *p, void *resource_handle)
{
    cmsis_nn_context per_filter, per_unit;
    cmsis_nn_svdf_params svdf;
    cmsis_nn_per_tensor_quant_params in_quant, out_quant;
    const int32_t filters = p->batch * p->num_filters;
    const cmsis_nn_dims in = tvmk_cmsis_nn_dims(p->batch, p->input_size, 1, 1);
    const cmsis_nn_dims st = tvmk_cmsis_nn_dims(p->batch, p->num_filters * p->memory_size, 1, 1);
    const cmsis_nn_dims wf = tvmk_cmsis_nn_dims(p->num_filters, p->input_size, 1, 1);
    const cmsis_nn_dims wt = tvmk_cmsis_nn_dims(p->num_filters, p->memory_size, 1, 1);
    const cmsis_nn_dims b = tvmk_cmsis_nn_dims(p->num_units, 1, 1, 1);
    const cmsis_nn_dims out = tvmk_cmsis_nn_dims(p->batch, p->num_units, 1, 1);
    (void)resource_handle;

    if (p->scratch == NULL || p->state_zero_point != 0
        || p->scratch_bytes < (int32_t)sizeof(int32_t) * p->batch * (p->num_filters
                                                                       + p->num_units)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    per_filter.buf = p->scratch;
    per_filter.size = filters * (int32_t)sizeof(int32_t);
    per_unit.buf = (int32_t *)p->scratch + filters;
    per_unit.size = p->batch * p->num_units * (int32_t)sizeof(int32_t);
    svdf.rank = p->rank;
    svdf.input_offset = p->input_zero_point;
    svdf.output_offset = p->output_zero_point;
    svdf.input_activation.min = p->state_min;
    svdf.input_activation.max = p->state_max;
    svdf.output_activation.min = -128;
    svdf.output_activation.max = 127;
    in_quant.multiplier = p->scale_1_multiplier;
    in_quant.shift = p->scale_1_shift;
    out_quant.multiplier = p->scale_2_multiplier;
    out_quant.shift = p->scale_2_shift;
    return tvmk_cmsis_nn_status(arm_svdf_state_s16_s8(
        &per_filter, &per_unit, &svdf, &in_quant, &out_quant, &in, input, &st, state, &wf,
        weights_feature, &wt, weights_time, &b, bias, &out, output));
}
